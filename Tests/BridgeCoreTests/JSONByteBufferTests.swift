import Foundation
import Testing

@testable import BridgeCore

/// The byte buffer on its own: the escapes `appendString` writes, numbers as `JSONEncoder` writes
/// them, and growth past its capacity. Every string written is also parsed back by Foundation,
/// since PushWard and the store read what it writes.
@Suite("JSON byte buffer")
struct JSONByteBufferTests {
    /// What `body` writes into a fresh buffer of the smallest capacity (64), as text.
    static func written(_ body: (inout JSONByteBuffer) -> Void) -> String {
        var buffer = JSONByteBuffer(capacity: 0)
        body(&buffer)
        #expect(buffer.count == buffer.array.count)
        #expect(buffer.data == Data(buffer.array))
        return buffer.string
    }

    /// The escaping rule, scalar by scalar: `"` and `\` escaped, `\n` `\r` `\t` by name, the other
    /// controls below U+0020 as `\u00xx` in lowercase hex, everything else as it is.
    static func reference(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// The string `JSONDecoder` (what `JSONValue(parsing:)` and the store use) reads from `json`, a
    /// JSON string literal. Not `JSONSerialization`: on Linux it drops a U+FEFF inside a string.
    static func parsed(_ json: String) throws -> String? {
        try JSONDecoder().decode([String].self, from: Data("[\(json)]".utf8)).first
    }

    // MARK: Strings

    @Test func everyControlByteIsEscaped() throws {
        for value in UInt8(0)..<0x20 {
            let text = "a" + String(UnicodeScalar(value)) + "b"
            let json = Self.written { $0.appendString(text) }
            #expect(json == Self.reference(text), "byte \(value)")
            #expect(!json.utf8.contains { $0 < 0x20 }, "byte \(value) left raw")
            #expect(try Self.parsed(json) == text, "byte \(value)")
        }
        #expect(Self.written { $0.appendString("\u{0}\u{8}\u{1F}") } == #""\u0000\u0008\u001f""#)
        #expect(Self.written { $0.appendString("\n\r\t") } == #""\n\r\t""#)
    }

    @Test func quotesAndBackslashesAreEscapedAndNothingElseIs() throws {
        let text = #"say "hi" \ C:\path\ /slash/ "# + "\u{7F}"
        let json = Self.written { $0.appendString(text) }
        #expect(json == #""say \"hi\" \\ C:\\path\\ /slash/ "# + "\u{7F}\"")
        #expect(try Self.parsed(json) == text)
        #expect(Self.written { $0.appendString("") } == #""""#)
        #expect(Self.written { $0.appendString(#"\""#) } == #""\\\"""#)
    }

    /// Bidi controls, NUL, emoji sequences, U+FFFD (what a lone surrogate becomes in a `String`),
    /// the line separators JavaScript once refused, a BOM: non-ASCII is copied as UTF-8.
    @Test(arguments: [
        "\u{202E}evil\u{202C} \u{2066}isolate\u{2069} \u{200F}rtl", "nul\u{0}inside", "👨‍👩‍👧‍👦 🇫🇷 👍🏽",
        "bad \u{FFFD} byte", "line\u{2028}para\u{2029}end", "\u{FEFF}bom", "e\u{301}\u{301}\u{301} zalgo",
        "日本語 العربية עברית", String(repeating: "\u{202E}😀\u{0}\"", count: 5_000),
    ])
    func hostileUnicodeRoundTrips(text: String) throws {
        let json = Self.written { $0.appendString(text) }
        #expect(json == Self.reference(text))
        #expect(try Self.parsed(json) == text)
    }

    // MARK: Growth

    /// Pieces of every length from 1 to 300, some with escapes, cross every doubling of the
    /// capacity from 64 up; after each piece the buffer holds exactly what was written so far.
    @Test func growsAcrossCapacityBoundaries() throws {
        var buffer = JSONByteBuffer(capacity: 64)
        var expected = ""
        for length in 1...300 {
            let piece = String(repeating: length % 3 == 0 ? "\u{1}" : (length % 3 == 1 ? "x" : "é"), count: length)
            buffer.appendString(piece)
            expected += Self.reference(piece)
            buffer.append(JSONByteBuffer.comma)
            expected += ","
            #expect(buffer.count == expected.utf8.count, "after \(length)")
        }
        #expect(buffer.string == expected)
        #expect(expected.utf8.count > 64 << 10)
        // One piece far past double the capacity, and escapes that multiply it by six.
        let large = String(repeating: "y", count: 100_000)
        #expect(Self.written { $0.appendString(large) } == Self.reference(large))
        let controls = String(repeating: "\u{2}", count: 100_000)
        let json = Self.written { $0.appendString(controls) }
        #expect(json.utf8.count == 600_002)
        #expect(try Self.parsed(json) == controls)
    }

    // MARK: Numbers

    @Test func integersAreTheirDigits() {
        var values: [Int64] = [0, 1, -1, .max, .min, .min + 1, .max - 1]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, -power]
        }
        for value in values {
            #expect(Self.written { $0.appendInteger(value) } == String(value))
        }
        #expect(Self.written { $0.appendInteger(Int8.min) } == "-128")
        #expect(Self.written { $0.appendDigits(.max) } == String(UInt64.max))
        #expect(Self.written { $0.appendDigits(10_000_000_000_000_000_000) } == "10000000000000000000")
    }

    /// Doubles as `JSONEncoder` writes them (the stored run state's promise), read back exactly:
    /// -0 keeps its sign, integral values below 2^53 are digits, 2^53 and beyond are too while
    /// their description has no exponent, the rest Swift's shortest form.
    @Test(arguments: [
        -0.0, 0, 1, -1, 1.5, 0.1, 100, 9_007_199_254_740_991, -9_007_199_254_740_991, 9_007_199_254_740_992,
        1e16, 1e22, 1e300, -2.5e-7, 123_456_789.125, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude,
        -Double.greatestFiniteMagnitude, Double(Int64.min),
    ])
    func doublesAreWrittenAsJSONEncoderWritesThem(value: Double) throws {
        let json = Self.written { $0.appendFiniteDouble(value) }
        let encoded = String(decoding: try JSONEncoder().encode([value]), as: UTF8.self)
        #expect("[" + json + "]" == encoded)
        let read = try JSONDecoder().decode([Double].self, from: Data("[\(json)]".utf8))[0]
        #expect(read == value && read.sign == value.sign, "\(json)")
    }

    @Test func negativeZeroKeepsItsSign() {
        #expect(Self.written { $0.appendFiniteDouble(-0.0) } == "-0")
        #expect(Self.written { $0.appendFiniteDouble(0.0) } == "0")
        #expect(Self.written { $0.appendFiniteDouble(9_007_199_254_740_991) } == "9007199254740991")
        #expect(Self.written { $0.appendShortestForm("3.0") } == "3")
        #expect(Self.written { $0.appendShortestForm("30") } == "30")
    }
}
