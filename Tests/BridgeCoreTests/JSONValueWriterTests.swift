import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

/// `JSONValueWriter` walks values with a stack of its own instead of recursing; these check that
/// it writes exactly what the plain recursive definition of the two formats writes.
@Suite("JSON value writer")
struct JSONValueWriterTests {
    /// The formats by their definition: compact, keys sorted; or indented, one element a line.
    static func reference(_ value: JSONValue, indent: String? = nil, level: Int = 0) -> String {
        let inner = indent.map { "\n" + String(repeating: $0, count: level + 1) } ?? ""
        let closing = indent.map { "\n" + String(repeating: $0, count: level) } ?? ""
        switch value {
        case .array(let elements) where !elements.isEmpty:
            return "["
                + elements.map { inner + reference($0, indent: indent, level: level + 1) }.joined(separator: ",")
                + closing + "]"
        case .object(let members) where !members.isEmpty:
            let sorted = members.sorted { $0.key < $1.key }
            return "{"
                + sorted.map {
                    inner + JSONValue.string($0.key).canonicalString + (indent == nil ? ":" : ": ")
                        + reference($0.value, indent: indent, level: level + 1)
                }.joined(separator: ",") + closing + "}"
        case .array: return "[]"
        case .object: return "{}"
        default: return value.canonicalString
        }
    }

    static func randomValue(_ random: inout SplitMix64, depth: Int = 0) -> JSONValue {
        let kind = random.next() % (depth > 6 ? 5 : 7)
        switch kind {
        case 0: return .null
        case 1: return .bool(random.next() % 2 == 0)
        case 2: return .number(Double(Int64(bitPattern: random.next()) % 100_000) / 8)
        // Finite, from about 2^-255 to 2, most with all 17 significant digits.
        case 3: return .number(Double(bitPattern: random.next() >> 2 | 0x3000_0000_0000_0000))
        case 4: return .string(["", "a", "é\"\\\n", "\u{202E}😀\u{0}", "key"][Int(random.next() % 5)])
        case 5:
            return .array((0..<Int(random.next() % 5)).map { _ in randomValue(&random, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for index in 0..<Int(random.next() % 5) {
                members["k\(random.next() % 7)\(index % 2 == 0 ? "é" : "")"] = randomValue(&random, depth: depth + 1)
            }
            return .object(members)
        }
    }

    @Test func writesWhatTheRecursiveDefinitionWrites() throws {
        var random = SplitMix64(seed: 0x4A53_4F4E)
        for round in 0..<2_000 {
            let value = Self.randomValue(&random)
            #expect(value.canonicalString == Self.reference(value), "round \(round)")
            #expect(value.indentedString() == Self.reference(value, indent: "  "), "round \(round)")
            #expect(value.indentedString(indent: 4) == Self.reference(value, indent: "    "), "round \(round)")
            #expect(try JSONValue(parsing: value.canonicalData) == value, "round \(round)")
        }
    }

    @Test func theTwoFormatsOfOneValue() {
        let value: JSONValue = ["b": [1, [], [:], ["x": nil]], "a": "é", "c": 1.5]
        #expect(value.canonicalString == #"{"a":"é","b":[1,[],{},{"x":null}],"c":1.5}"#)
        #expect(
            value.indentedString()
                == """
                {
                  "a": "é",
                  "b": [
                    1,
                    [],
                    {},
                    {
                      "x": null
                    }
                  ],
                  "c": 1.5
                }
                """)
        #expect(JSONValue.number(.nan).canonicalString == "null")
        #expect(JSONValue.string("s").indentedString() == #""s""#)
    }
}
