import Foundation

/// A JSON document as a value: what the bridge sends to PushWard, stores as activity content and
/// diffs as RFC 7396 merge-patches.
///
/// Numbers are one case: PushWard's contract has no integer/float distinction that matters to us,
/// and integral values are always written without a fraction (`3`, not `3.0`), so output is
/// stable. `null` is a real value here: in a merge-patch it means "clear this field".
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue {
    /// The object's members, or nil when this is not an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    public var doubleValue: Double? {
        if case .number(let number) = self { return number }
        return nil
    }

    /// The number as an integer, when it is one exactly.
    public var intValue: Int? {
        guard case .number(let number) = self, number.rounded() == number, abs(number) < 9.0e15 else { return nil }
        return Int(number)
    }

    public var boolValue: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Member lookup on an object; nil for a missing member or a non-object.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let elements = try? container.decode([JSONValue].self) {
            self = .array(elements)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .number(let number):
            if let integer = intValue { try container.encode(integer) } else { try container.encode(number) }
        case .string(let text): try container.encode(text)
        case .array(let elements): try container.encode(elements)
        case .object(let members): try container.encode(members)
        }
    }
}

extension JSONValue {
    /// The deepest nesting of arrays and objects the writers (`canonicalString`, `canonicalData`,
    /// `indentedString`) produce; an array or object inside this many others is written as `null`.
    ///
    /// 512 because that is what Foundation reads: `JSONDecoder` and `JSONSerialization` refuse a
    /// 513th level as invalid JSON. So every value parsed from a document (PushWard's and GitHub's
    /// answers, fixtures, stored content) is written back whole, and what is written can always be
    /// read back, by the bridge and by PushWard. Only a value built in code could be deeper, and the
    /// bridge builds none past a few levels: written as `null` rather than thrown, since no caller
    /// (a request body, a log line, a stored row) has a better answer and none may crash. The
    /// writers do not recurse (`JSONValueWriter`), so no depth can exhaust a thread's stack.
    public static let maximumDepth = 512

    /// Parses a JSON document.
    public init(parsing data: Data) throws {
        self = try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// Compact JSON with object keys sorted, so the same value always prints the same bytes:
    /// golden files and `render` output depend on it.
    ///
    /// Written into a byte buffer (runs of plain text copied at once) and made a `String` once:
    /// this runs for every card on every delivery, and appending to a `String` scalar by scalar
    /// was a large share of that cost. The bytes are the ones the `String` version wrote: the
    /// same escapes (`JSONByteBuffer.appendString`), integers as digits, other finite numbers as
    /// their `description`, non-finite ones as `null`. At most `maximumDepth` arrays and objects
    /// deep: a container nested deeper is written as `null`.
    public var canonicalString: String {
        var output = JSONByteBuffer(capacity: 512)
        write(to: &output, depth: 0)
        return output.string
    }

    public var canonicalData: Data {
        var output = JSONByteBuffer(capacity: 512)
        write(to: &output, depth: 0)
        return output.data
    }

    /// `depth`: the arrays and objects already open around this value in the document written.
    func write(to output: inout JSONByteBuffer, depth: Int) {
        JSONValueWriter(depth: depth).write(self, to: &output)
    }
}
