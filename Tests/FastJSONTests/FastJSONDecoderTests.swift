import BridgeTestSupport
import Foundation
import Testing

@testable import FastJSON

/// `FastJSONDecoder` against Foundation's `JSONDecoder`, the reference: same values, same errors
/// (case, coding path and message), on generic `Decodable` types, escapes, numbers and invalid
/// documents. The recorded GitHub deliveries are compared in `BridgeCoreTests`
/// (`WebhookDecoderParityTests`), where the payload types live.
@Suite("FastJSONDecoder")
struct FastJSONDecoderTests {
    /// A document of the shape the decoder is for (nested objects, arrays, escapes, numbers),
    /// cut at twenty places by the syntax-error test.
    static let sampleDocument = #"""
        {"action":"completed","workflow_job":{"id":17556741424,"run_id":16248306373,"run_attempt":1,
        "name":"build (ubuntu, "6.0") 🚀","status":"completed","conclusion":"success",
        "started_at":"2025-07-13T09:41:36Z","completed_at":"2025-07-13T09:42:05Z","labels":["ubuntu-latest"],
        "steps":[{"name":"Set up job","status":"completed","conclusion":"success","number":1},
        {"name":"Run tests\n","status":"completed","conclusion":"success","number":2,"ratio":0.25e1}]},
        "repository":{"id":1,"full_name":"acme/widgets","private":false,"topics":[],"owner":null}}
        """#

    // MARK: Generic Decodable types

    @Test func nestedTypesEnumsDictionariesAndOptionals() throws {
        let json = #"""
            {
              "name": "widgets", "count": 42, "ratio": 0.25, "flag": true, "optional": null,
              "nested": {"title": "a", "tags": ["x", "y"], "inner": {"depth": 2}},
              "list": [{"title": "b", "tags": []}, {"title": "c", "tags": ["z"], "inner": null}],
              "matrix": [[1, 2], [], [3]], "color": "green", "level": 2,
              "byName": {"one": 1, "two": 2}, "byNumber": {"1": "one", "-7": "minus seven"},
              "int8": -128, "uint64": 18446744073709551615, "float": 3.5, "int16": 1e3, "uint32": 7.0,
              "data": "aGVsbG8=",
              "optionals": [1, null, 3], "unicode": "caf\u00e9 \ud83d\ude00 naïve", "empty": {}, "nothing": []
            }
            """#
        let fast = try FastJSONDecoder().decode(Everything.self, from: Data(json.utf8))
        #expect(fast == (try JSONDecoder().decode(Everything.self, from: Data(json.utf8))))
        #expect(fast.byNumber == [1: "one", -7: "minus seven"])
        #expect(fast.unicode == "café 😀 naïve")
        #expect(fast.uint64 == .max && fast.int16 == 1000 && fast.uint32 == 7)
        #expect(fast.list[1].inner == nil && fast.nested.inner?.depth == 2)
    }

    @Test func topLevelScalarsAndContainers() {
        expectSame(Int.self, ["1", " 2 ", "\n-3\t", "[1]", "\"1\"", "null", "{}"])
        expectSame(String.self, [#""a""#, #"  "b"  "#, "1", "null", "[\"a\"]"])
        expectSame(Bool.self, ["true", "false", "null", "0", "\"true\""])
        expectSame(Int?.self, ["null", "1", "\"x\""])
        expectSame([Int].self, ["[]", "[1,2,3]", "[1,null]", "[[1]]", "{}", "null", "1"])
        expectSame([String: Int].self, ["{}", #"{"a":1}"#, #"{"a":null}"#, "[]", "null"])
        expectSame([Int: Int].self, [#"{"1":1,"2":2}"#, #"{"x":1}"#])
        expectSame([[String: [Int?]]].self, [#"[{"a":[1,null]},{}]"#, #"[{"a":[1,"x"]}]"#])
        expectSame(Everything.Color.self, [#""red""#, #""blue""#, "1"])
        expectSame(Everything.Level.self, ["1", "2", "3", "1.0", "\"1\""])
    }

    /// Foundation keeps the first of duplicated keys, for keyed containers and dictionaries alike,
    /// comparing keys as `String`s (escapes decoded, canonically equivalent spellings equal).
    @Test func duplicateKeysResolveToTheFirstOccurrence() throws {
        let json = Data(#"{"a":1,"a":2,"b":"x","b":null}"#.utf8)
        struct Pair: Decodable, Equatable {
            var a: Int
            var b: String?
        }
        #expect(try FastJSONDecoder().decode(Pair.self, from: json) == Pair(a: 1, b: "x"))
        #expect(try JSONDecoder().decode(Pair.self, from: json) == Pair(a: 1, b: "x"))
        expectSame([String: Int].self, [#"{"a":1,"a":2}"#, #"{"\u0061":1,"a":2}"#, "{\"é\":1,\"e\u{301}\":2}"])
        expectSame(Pair.self, [#"{"a":null,"a":1}"#, #"{"a":"x","a":1}"#, #"{"a":1,"a":"x"}"#, #"{"\u0061":3}"#])
        expectSame(Kelvin.self, ["{\"K\":1}", "{\"\u{212A}\":1}", "{\"k\":1}", #"{"\u004B":1}"#, #"{"\u212a":1}"#])
    }

    // MARK: Strings

    @Test func stringsWithEveryEscapeAndNonASCIIText() {
        let strings = [
            #""""#, #""plain ascii""#, #""\"\\\/\b\f\n\r\t""#, #""\u0000\u001f\u0020\u007f\u0080\u07ff\u0800\uffff""#,
            #""\u00e9\u00E9""#, #""\ud83d\ude00 \uD834\uDD1E""#, "\"café naïve 日本語 😀 👨‍👩‍👧\"",
            #""mixed é \u00e9 😀 \ud83d\ude00""#, "\"\u{7F}\"", #""a/b\/c""#, "\"\\u0041BC\"",
            String(repeating: "\"long \\n string é ", count: 1) + String(repeating: "x", count: 500) + "\"",
        ]
        expectSame(String.self, strings)
        expectSame([String].self, ["[" + strings.joined(separator: ",") + "]"])
    }

    /// Malformed strings fail only when decoded, as in Foundation, and then as invalid JSON.
    @Test func malformedStringsFailWhenDecoded() {
        let strings = [
            #""\x""#, #""\'""#, #""\U0041""#, #""\u12G4""#, #""\u00zz""#, #""\ud800""#, #""\udc00""#, #""\ud800x""#,
            #""\ud800\u0041""#, #""\ud83d\ud83d""#, #""\ud83d\""#, "\"a\u{1}b\"", "\"tab\there\"", "\"new\nline\"",
            "\"\\\u{1}\"",
        ]
        expectSame(String.self, strings)
        for string in strings {
            expectSyntaxError(String.self, Data(string.utf8))
            // Not read, the same string is accepted.
            expectSame(Single.self, [#"{"k":1,"unread":"# + string + "}"])
        }
        let invalidUTF8: [[UInt8]] = [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0xC0, 0x80], [0xF4, 0x90, 0x80, 0x80]]
        for bytes in invalidUTF8 {
            let string = Data([0x22] + bytes + [0x22])
            expectSame(String.self, string)
            expectSyntaxError(String.self, string)
            expectSame(Single.self, Data(#"{"k":1,"x":"#.utf8) + string + Data("}".utf8))
            expectSame([String: Int].self, Data("{".utf8) + string + Data(":1}".utf8))
        }
        // Foundation decodes every key of an object it opens: a bad one fails it even if not asked for.
        expectSame(
            Single.self, [#"{"k":1,"b\x":2}"#, #"{"k":1,"\ud800":2}"#, "{\"k\":1,\"\u{1}\":2}", #"{"k":1,"\u0062":2}"#])
        expectSyntaxError(Single.self, Data(#"{"k":1,"b\x":2}"#.utf8))
    }

    // MARK: Numbers

    @Test func integersMatchFoundationInEveryWidth() {
        let numbers = [
            "0", "-0", "1", "-1", "1.0", "-0.0", "1e3", "1E3", "1e+3", "2.5e1", "10e-1", "1.5", "1e-1", "25e-1",
            "0e400",
            "1e400", "127", "128", "-128", "-129", "255", "256", "32767", "32768", "65535", "65536", "2147483647",
            "2147483648", "-2147483649", "4294967295", "4294967296", "9223372036854775807", "9223372036854775808",
            "-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616", "1e19",
            "9007199254740993", "9007199254740993.0", "9007199254740993.000000", "9007199254740993.5",
            "90071992547409930e-1", "12345678901234567.89", "9007199254740993.123456", "-9223372036854775808.0",
            "9223372036854775807e0", "18446744073709551615.0", "100000000000000000000", "01", "-01", "00", "1.",
            ".5", "-", "--1", "1-2", "1e", "1e+", "1.e3", "1ee2", "1.2.3", "0.000000000000000000000000001e27",
        ]
        expectSame(Int.self, numbers)
        expectSame(Int8.self, numbers)
        expectSame(Int16.self, numbers)
        expectSame(Int32.self, numbers)
        expectSame(Int64.self, numbers)
        expectSame(UInt.self, numbers)
        expectSame(UInt8.self, numbers)
        expectSame(UInt16.self, numbers)
        expectSame(UInt32.self, numbers)
        expectSame(UInt64.self, numbers)
        expectSame([Int].self, numbers.map { "[\($0)]" })
    }

    @Test func floatingPointMatchesFoundation() {
        let numbers = [
            "0", "-0", "0.0", "-0.0", "0e5", "0e-5", "0.0000e-999", "1", "1.5", "-1.5", "0.1", "0.30000000000000004",
            "1e308", "1e309", "-1e309", "1e-400", "4.9e-324", "2.2250738585072014e-308", "1.7976931348623157e308",
            "123456789012345678901234567890", "3.4028235e38", "3.4028236e38", "1e38", "1e39", "1e-45", "1e-46",
            "16777217", "1E400", "01", "1.", "1e5.5", "-", "1.2.3",
        ]
        expectSame(Double.self, numbers)
        expectSame(Float.self, numbers)
    }

    // MARK: Invalid documents

    /// Both decoders reject these, and `FastJSONDecoder` with `.dataCorrupted` at an empty path.
    @Test func invalidDocumentsAreSyntaxErrors() throws {
        let fixture = Data(Self.sampleDocument.utf8)
        var documents: [Data] = [
            "", " ", "\n\t\r ", "{", "[", "[1", "[1,", "{\"a\"", "{\"a\":", "{\"a\":1", "\"abc", "tru", "nul", "fals",
            "truex", "[1 2]", "{\"a\":1 \"b\":2}", "{\"a\"}", "{\"a\":}", "{1:2}", "{'a':1}", "[,]", "[1,,]", "[,1]",
            "{,}", "{\"a\":1,,}", "[1]x", "{\"a\":1}}", "[1]]", "1 2", "\"a\" \"b\"", "[1]\u{0}", "NaN", "Infinity",
            "-Infinity", "+1", ".5", "-a", "0x10", "[01]", "[1.]", "[-]", "{\"a\":01}", "[\"\\x\"]", "[\"\\u12\"]",
            "[\"\\ud800\"]", "[\"a\u{1}\"]", "{\"a\\x\":1}", "/* comment */ 1", "[1] // comment", "\u{FEFF}\u{FEFF}1",
        ].map { Data($0.utf8) }
        documents += stride(from: 1, to: fixture.count, by: fixture.count / 20).map { fixture.prefix($0) }
        documents.append(Data(String(repeating: "[", count: 513).utf8) + Data(String(repeating: "]", count: 513).utf8))
        documents.append(Data([0x22, 0xFF, 0x22]))
        documents.append(Data([0x00, 0x31, 0x00, 0x00]))
        for document in documents {
            expectSame(AnyJSON.self, document)
            expectSyntaxError(AnyJSON.self, document)
        }
    }

    /// Foundation's leniencies are kept, so that no delivery it accepted is now rejected: one
    /// trailing comma, malformed values that are never decoded, a UTF-8 byte order mark.
    @Test func foundationLeniencesAreKept() {
        let readInFull = [
            "[1,]", "[1, ]", "{\"k\":1,}", "{\"k\":[{},],}", "\u{FEFF}{\"k\":1}", "{\"k\":1}\n\r\t ",
            String(repeating: "[", count: 511) + "{\"k\":1}" + String(repeating: "]", count: 511),
        ]
        for document in readInFull {
            expectSame(AnyJSON.self, Data(document.utf8))
            #expect((try? FastJSONDecoder().decode(AnyJSON.self, from: Data(document.utf8))) != nil, "\(document)")
        }
        let readInPart = [
            #"{"k":1,"x":01}"#, #"{"k":1,"x":[1.2.3, -, 1e, 00]}"#, #"{"k":1,"x":{"bad\x":1}}"#,
            #"{"k":1,"x":"\ud800"}"#, "{\"k\":1,\"x\":\"\u{1}\"}",
        ]
        for document in readInPart {
            expectSame(Single.self, Data(document.utf8))
            #expect((try? FastJSONDecoder().decode(Single.self, from: Data(document.utf8))) != nil, "\(document)")
        }
        expectSame([[Int]].self, Data((String(repeating: "[", count: 512) + String(repeating: "]", count: 512)).utf8))
    }

    /// GitHub sends UTF-8; a UTF-16 or UTF-32 document is not converted (Foundation's
    /// `JSONDecoder` would convert it) but refused as invalid JSON, with the usual error.
    @Test func otherEncodingsAreInvalidJSON() {
        let json = #"{"k":7,"s":"é😀"}"#
        for encoding: String.Encoding in [.utf16, .utf16LittleEndian, .utf16BigEndian, .utf32LittleEndian] {
            let document = json.data(using: encoding)!
            do {
                _ = try FastJSONDecoder().decode(Single.self, from: document)
                Issue.record("\(encoding) decoded")
            } catch DecodingError.dataCorrupted(let context) {
                #expect(context.codingPath.isEmpty && context.debugDescription == "The given data was not valid JSON.")
            } catch {
                Issue.record("\(encoding): \(error)")
            }
        }
    }

    // MARK: Key, value and type errors

    @Test func missingNullAndMistypedValuesHaveFoundationsPaths() {
        expectSame(
            Outer.self,
            [
                #"{"inner":{"list":[{"x":1},{"y":2}]}}"#, #"{"inner":{"list":[{"x":1},{"x":null}]}}"#,
                #"{"inner":{"list":[{"x":1},{"x":"1"}]}}"#, #"{"inner":{"list":[{"x":1},[]]}}"#,
                #"{"inner":{"list":[{"x":1},null]}}"#, #"{"inner":{"list":{}}}"#, #"{"inner":{"list":null}}"#,
                #"{"inner":null}"#, #"{"inner":[]}"#, #"{}"#, "[]", "null", #"{"inner":{"list":[{"x":1.5}]}}"#,
                #"{"inner":{"list":[{"x":1,"flag":null}]}}"#, #"{"inner":{"list":[{"x":1,"flag":"yes"}]}}"#,
                #"{"inner":{"list":[],"data":"%%%"}}"#, #"{"inner":{"list":[],"data":[1]}}"#,
                #"{"inner":{"list":[],"data":null}}"#,
            ])
    }

    /// Errors thrown by the decoded types themselves reach the caller unchanged.
    @Test func errorsOfDecodedTypesPassThrough() throws {
        struct Refusal: Error, Equatable { var path: [String] }
        struct Refusing: Decodable {
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: AnyKey.self)
                throw Refusal(path: (container.codingPath + [AnyKey("here")]).map(\.stringValue))
            }
        }
        struct Holder: Decodable { var items: [Refusing] }
        let json = Data(#"{"items":[{"a":1}]}"#.utf8)
        #expect(throws: Refusal(path: ["items", "Index 0", "here"])) {
            try FastJSONDecoder().decode(Holder.self, from: json)
        }
        #expect(throws: Refusal(path: ["items", "Index 0", "here"])) {
            try JSONDecoder().decode(Holder.self, from: json)
        }
    }

    // MARK: Containers

    @Test func containerOperationsMatchFoundation() {
        expectSame(UnkeyedProbe.self, ["[]", "[1]", "[1,null]", "[null,2,3]", "[[1,2],{\"a\":1},3]", "[\"x\"]"])
        expectSame(
            KeyedProbe.self, [#"{"a":1}"#, #"{"a":null,"super":2}"#, #"{"b":[1,2],"a":{"c":3}}"#, #"{"a":"x"}"#])
        expectSame(AnyJSON.self, [#"{"a":[1,{"b":[null,true,false,"s",1.5,-2]}],"c":{}}"#])
    }

    /// A decoder that outlives `decode` still reads its values (the bytes were copied).
    @Test func escapedDecodersKeepWorking() throws {
        let escaped = try Self.decodeEscaping()
        let container = try escaped.decoder.container(keyedBy: AnyKey.self)
        #expect(try container.decode(String.self, forKey: AnyKey("name")) == "kept é")
        #expect(try container.decode([Int].self, forKey: AnyKey("list")) == [1, 2])
        #expect(container.allKeys.map(\.stringValue).sorted() == ["list", "name"])
    }

    private static func decodeEscaping() throws -> Escaping {
        var bytes = Array(#"{"name":"kept é","list":[1,2]}"#.utf8)
        let data = Data(bytes)
        let escaped = try FastJSONDecoder().decode(Escaping.self, from: data)
        bytes.removeAll()
        return escaped
    }
}

// MARK: - Differential helpers

extension FastJSONDecoderTests {
    typealias Outcome = DecodingOutcome

    func outcome<T: Decodable & Equatable>(_ type: T.Type, _ json: Data, foundation: Bool = false) -> Outcome<T> {
        DecodingOutcome(decoding: type, from: json, foundation: foundation)
    }

    func expectSame<T: Decodable & Equatable>(
        _ type: T.Type, _ documents: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for document in documents {
            expectSame(type, Data(document.utf8), sourceLocation: sourceLocation)
        }
    }

    func expectSame<T: Decodable & Equatable>(
        _ type: T.Type, _ document: Data, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let fast = outcome(type, document)
        let foundation = outcome(type, document, foundation: true)
        #expect(
            fast == foundation,
            "\(T.self) from \(String(reflecting: String(decoding: document.prefix(120), as: UTF8.self)))",
            sourceLocation: sourceLocation)
    }

    /// `.dataCorrupted` with an empty path, from both decoders.
    func expectSyntaxError<T: Decodable & Equatable>(
        _ type: T.Type, _ document: Data, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let label = String(reflecting: String(decoding: document.prefix(80), as: UTF8.self))
        for foundation in [false, true] {
            do {
                _ =
                    foundation
                    ? try JSONDecoder().decode(type, from: document)
                    : try FastJSONDecoder().decode(type, from: document)
                Issue.record("\(label) decoded (foundation: \(foundation))", sourceLocation: sourceLocation)
            } catch DecodingError.dataCorrupted(let context) {
                #expect(context.codingPath.isEmpty, "\(label)", sourceLocation: sourceLocation)
            } catch {
                Issue.record("\(label): \(error) (foundation: \(foundation))", sourceLocation: sourceLocation)
            }
        }
    }
}

// MARK: - Test types

/// Any JSON value, read in full through keyed, unkeyed and single value containers. Only type
/// mismatches are taken as "try the next type"; every other error propagates. (Objects are read
/// in `allKeys` order, which for Foundation is hash order: only errors that do not depend on the
/// order, such as syntax errors, can be compared.)
private indirect enum AnyJSON: Decodable, Equatable {
    case null
    case bool(Bool)
    case integer(Int)
    case number(Double)
    case string(String)
    case array([AnyJSON])
    case object([String: AnyJSON])

    init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
            return
        }
        do {
            let container = try decoder.container(keyedBy: AnyKey.self)
            var object: [String: AnyJSON] = [:]
            for key in container.allKeys {
                object[key.stringValue] = try container.decode(AnyJSON.self, forKey: key)
                #expect(container.contains(key))
            }
            self = .object(object)
            return
        } catch DecodingError.typeMismatch {}
        do {
            var container = try decoder.unkeyedContainer()
            var array: [AnyJSON] = []
            while !container.isAtEnd { array.append(try container.decode(AnyJSON.self)) }
            #expect(array.count == container.count)
            self = .array(array)
            return
        } catch DecodingError.typeMismatch {}
        do {
            self = .bool(try single.decode(Bool.self))
            return
        } catch DecodingError.typeMismatch {}
        do {
            self = .string(try single.decode(String.self))
            return
        } catch DecodingError.typeMismatch {}
        if let integer = try? single.decode(Int.self) {
            self = .integer(integer)
        } else {
            self = .number(try single.decode(Double.self))
        }
    }
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ string: String) { stringValue = string }
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

private struct Single: Decodable, Equatable {
    var k: Int
}

private struct Kelvin: Decodable, Equatable {
    var kelvin: Int

    // The Kelvin sign, canonically equivalent to "K": Foundation matches keys as `String`s.
    enum CodingKeys: String, CodingKey {
        case kelvin = "\u{212A}"
    }
}

private struct Everything: Decodable, Equatable {
    enum Color: String, Decodable { case red, green }
    enum Level: Int, Decodable { case low = 1, high = 2 }
    struct Inner: Decodable, Equatable { var depth: Int }
    struct Nested: Decodable, Equatable {
        var title: String
        var tags: [String]
        var inner: Inner?
    }
    struct Empty: Decodable, Equatable {}

    var name: String
    var count: Int
    var ratio: Double
    var flag: Bool
    var optional: String?
    var missing: Int?
    var nested: Nested
    var list: [Nested]
    var matrix: [[Int]]
    var color: Color
    var level: Level
    var byName: [String: Int]
    var byNumber: [Int: String]
    var int8: Int8
    var uint64: UInt64
    var float: Float
    var int16: Int16
    var uint32: UInt32
    var data: Data
    var optionals: [Int?]
    var unicode: String
    var empty: Empty
    var nothing: [Empty]
}

private struct Outer: Decodable, Equatable {
    struct Item: Decodable, Equatable {
        var x: Int
        var flag: Bool?
    }
    struct Inner: Decodable, Equatable {
        var list: [Item]
        var data: Data?
    }
    var inner: Inner
}

/// Records what Foundation's unkeyed container answers, past its end included.
private struct UnkeyedProbe: Decodable, Equatable {
    var log: [String] = []

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        func attempt(_ label: String, _ body: () throws -> String) {
            do { log.append("\(label)=\(try body())") } catch let error as DecodingError {
                log.append("\(label) threw \(DecodingErrorText.describe(error))")
            } catch { log.append("\(label) threw \(type(of: error))") }
            log.append(
                "index \(container.currentIndex) atEnd \(container.isAtEnd) count \(String(describing: container.count))"
            )
        }
        attempt("nil") { "\(try container.decodeNil())" }
        attempt("ifPresent") { "\(String(describing: try container.decodeIfPresent(Int.self)))" }
        attempt("nested") { "\(try container.nestedUnkeyedContainer().count ?? -1)" }
        attempt("keyed") { "\(try container.nestedContainer(keyedBy: AnyKey.self).allKeys.count)" }
        attempt("int") { "\(try container.decode(Int.self))" }
        attempt("string") { "\(try container.decode(String.self))" }
        attempt("super") { "\(try container.superDecoder().codingPath.map(\.stringValue))" }
        attempt("ifPresent") { "\(String(describing: try container.decodeIfPresent(Int.self)))" }
        attempt("nil") { "\(try container.decodeNil())" }
        attempt("ifPresent") { "\(String(describing: try container.decodeIfPresent(String.self)))" }
    }
}

/// Records what Foundation's keyed container answers: nil checks, super decoders, nested containers.
private struct KeyedProbe: Decodable, Equatable {
    var log: [String] = []

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        func attempt(_ label: String, _ body: () throws -> String) {
            do { log.append("\(label)=\(try body())") } catch let error as DecodingError {
                log.append("\(label) threw \(DecodingErrorText.describe(error))")
            } catch { log.append("\(label) threw \(type(of: error))") }
        }
        for name in ["a", "b", "super", "missing"] {
            let key = AnyKey(name)
            attempt("contains \(name)") { "\(container.contains(key))" }
            attempt("nil \(name)") { "\(try container.decodeNil(forKey: key))" }
            attempt("int \(name)") { "\(String(describing: try container.decodeIfPresent(Int.self, forKey: key)))" }
            attempt("nested \(name)") {
                "\(try container.nestedContainer(keyedBy: AnyKey.self, forKey: key).codingPath.count)"
            }
            attempt("array \(name)") { "\(try container.nestedUnkeyedContainer(forKey: key).count ?? -1)" }
            attempt("super \(name)") {
                let superDecoder = try container.superDecoder(forKey: key)
                let single = try superDecoder.singleValueContainer()
                return "\(superDecoder.codingPath.map(\.stringValue)) nil \(single.decodeNil())"
            }
        }
        attempt("super") {
            let superDecoder = try container.superDecoder()
            return
                "\(superDecoder.codingPath.map(\.stringValue)) \(try superDecoder.singleValueContainer().decodeNil())"
        }
    }
}

/// Keeps its decoder past `decode`.
private struct Escaping: Decodable {
    var decoder: any Decoder
    init(from decoder: any Decoder) throws { self.decoder = decoder }
}
