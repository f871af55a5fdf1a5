import Foundation

/// A drop-in replacement for Foundation's `JSONDecoder` with default options, several times
/// faster on large documents of which little is read, such as GitHub webhook bodies.
///
/// The document is scanned once into a `JSONTape` (no `String` allocated), and keyed containers
/// look keys up by comparing bytes instead of building a dictionary of every key first, which is
/// where `JSONDecoder` spends its time on objects like `repository` (about 100 keys, 2 read).
///
/// Results and errors are Foundation's, checked by differential tests:
/// - accepted documents are the same, including Foundation's leniencies: one trailing comma in an
///   array or object, and malformed strings or numbers in values nobody decodes;
/// - a duplicated key resolves to its first occurrence;
/// - integers may be written `1.0`, `1e3` or `-0`; a number that is not integral or out of range
///   for the requested type is invalid JSON, like a bad escape in a decoded string;
/// - syntax errors are `DecodingError.dataCorrupted` with an empty coding path (and the location in
///   `underlyingError`), missing keys `keyNotFound`, nulls `valueNotFound` (`typeMismatch` for
///   `Bool`, as Foundation), wrong types `typeMismatch`, all with Foundation's coding paths; errors
///   thrown by the types being decoded pass through unchanged;
/// - `Data` is base64, as Foundation's default strategy.
///
/// Known differences: `allKeys` lists keys in document order (Foundation: hash order); integers
/// written with more than 38 significant digits and a fraction or exponent may be rejected where
/// Foundation's `Decimal` rounding would accept them. Not supported, since no caller decodes them:
/// documents in UTF-16 or UTF-32 (invalid JSON here), `URL`, `Decimal` and `Date` (which decode
/// through their own `Decodable`, not as Foundation special-cases them), `JSONDecoder`'s options
/// (key, date, data and non-conforming float strategies, JSON5, `userInfo`), documents of 4 GiB or
/// more.
public struct FastJSONDecoder: Sendable {
    public init() {}

    /// Decodes a value of `type` from a JSON document; throws what `JSONDecoder().decode` would.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        do {
            return try Self.withUTF8Representation(of: data) { buffer in
                var decoder = JSONTapeDecoder(tape: try JSONTape(scanning: buffer), index: 0, node: nil)
                // The bytes are borrowed until this closure returns: copy them for anything that escaped.
                defer {
                    let decoderIsShared = !isKnownUniquelyReferenced(&decoder)
                    decoder.keepBytesIfShared(decoderIsShared: decoderIsShared)
                }
                return try decoder.unwrap(0, as: T.self, parent: nil, key: nil)
            }
        } catch let error as JSONSyntaxError {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: [], debugDescription: "The given data was not valid JSON.", underlyingError: error))
        }
    }

    /// Calls `body` with the document's bytes, past a UTF-8 byte order mark if there is one.
    /// Other encodings are not converted: GitHub sends UTF-8, and a UTF-16 or UTF-32 body fails
    /// as invalid JSON.
    private static func withUTF8Representation<T>(
        of data: Data, _ body: (UnsafeRawBufferPointer) throws -> T
    ) throws -> T {
        try data.withUnsafeBytes { bytes in
            let hasByteOrderMark = bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF
            return try body(UnsafeRawBufferPointer(rebasing: bytes[(hasByteOrderMark ? 3 : 0)...]))
        }
    }
}

// MARK: - Coding paths

/// A coding path as a linked list, so that going one level down costs one small allocation and
/// the `[CodingKey]` array is only built when asked for (mostly for errors).
final class JSONCodingPathNode {
    let parent: JSONCodingPathNode?
    let key: any CodingKey

    init(parent: JSONCodingPathNode?, key: any CodingKey) {
        self.parent = parent
        self.key = key
    }

    static func path(_ node: JSONCodingPathNode?, appending key: (any CodingKey)? = nil) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        if let key { keys.append(key) }
        var current = node
        while let node = current {
            keys.append(node.key)
            current = node.parent
        }
        return keys.reversed()
    }
}

/// An array index in a coding path, spelled like Foundation's: `Index 2`, with `intValue` 2.
struct JSONIndexKey: CodingKey {
    let index: Int

    init(index: Int) { self.index = index }
    init?(intValue: Int) { index = intValue }
    init?(stringValue: String) { nil }

    var stringValue: String { "Index \(index)" }
    var intValue: Int? { index }
}

/// The key of `superDecoder()`.
struct JSONSuperKey: CodingKey {
    init() {}
    init?(intValue: Int) { nil }
    init?(stringValue: String) { nil }

    var stringValue: String { "super" }
    var intValue: Int? { nil }
}

// MARK: - Decoder

/// The `Decoder` over a `JSONTape`. Like Foundation's, one instance serves a whole decode: going
/// into a nested value swaps its current value and path and restores them afterwards.
///
/// Scalars are read by `…Value(at:)` methods that return nil for a value of another JSON type;
/// callers then throw `mismatch(_:at:path:)`, so that coding paths are only built for errors.
final class JSONTapeDecoder: Decoder {
    let tape: JSONTape
    /// The current value's entry, or -1 for the null of a `superDecoder` whose key is absent.
    private(set) var index: Int
    private(set) var node: JSONCodingPathNode?

    init(tape: JSONTape, index: Int, node: JSONCodingPathNode?) {
        self.tape = tape
        self.index = index
        self.node = node
    }

    var codingPath: [any CodingKey] { JSONCodingPathNode.path(node) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Copies the borrowed bytes if this decoder, or another one sharing the tape, escaped.
    func keepBytesIfShared(decoderIsShared: Bool) {
        if decoderIsShared || tape.isShared { tape.takeOwnershipOfBytes() }
    }

    /// Another decoder over the same tape (for `superDecoder`).
    func sibling(at index: Int, node: JSONCodingPathNode?) -> JSONTapeDecoder {
        tape.isShared = true
        return JSONTapeDecoder(tape: tape, index: index, node: node)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try keyedContainer(at: index, node: node)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try unkeyedContainer(at: index, node: node)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Values

    @inline(__always)
    func kind(_ index: Int) -> JSONTape.Kind {
        index < 0 ? .null : tape[index].kind
    }

    func keyedContainer<Key: CodingKey>(at index: Int, node: JSONCodingPathNode?) throws -> KeyedDecodingContainer<
        Key
    > {
        switch kind(index) {
        case .object:
            return KeyedDecodingContainer(try JSONKeyedContainer<Key>(decoder: self, object: index, node: node))
        case .null:
            throw DecodingError.valueNotFound(
                [String: Any].self,
                DecodingError.Context(
                    codingPath: JSONCodingPathNode.path(node),
                    debugDescription: "Cannot get keyed decoding container -- found null value instead"))
        case let other:
            throw DecodingError.typeMismatch(
                [String: Any].self,
                DecodingError.Context(
                    codingPath: JSONCodingPathNode.path(node),
                    debugDescription:
                        "Expected to decode \([String: Any].self) but found \(Self.describe(other)) instead."
                ))
        }
    }

    func unkeyedContainer(at index: Int, node: JSONCodingPathNode?) throws -> any UnkeyedDecodingContainer {
        switch kind(index) {
        case .array:
            return JSONUnkeyedContainer(decoder: self, array: index, node: node)
        case .null:
            throw DecodingError.valueNotFound(
                [Any].self,
                DecodingError.Context(
                    codingPath: JSONCodingPathNode.path(node),
                    debugDescription: "Cannot get unkeyed decoding container -- found null value instead"))
        case let other:
            throw DecodingError.typeMismatch(
                [Any].self,
                DecodingError.Context(
                    codingPath: JSONCodingPathNode.path(node),
                    debugDescription: "Expected to decode \([Any].self) but found \(Self.describe(other)) instead."))
        }
    }

    /// Decodes the value at `index` as `T`, at path `parent` + `key`.
    func unwrap<T: Decodable>(
        _ index: Int, as type: T.Type, parent: JSONCodingPathNode?, key: (any CodingKey)?
    ) throws -> T {
        if T.self == Data.self {
            return try data(at: index, path: JSONCodingPathNode.path(parent, appending: key)) as! T
        }
        let node = key.map { JSONCodingPathNode(parent: parent, key: $0) } ?? parent
        let (savedIndex, savedNode) = (self.index, self.node)
        (self.index, self.node) = (index, node)
        defer { (self.index, self.node) = (savedIndex, savedNode) }
        return try T(from: self)
    }

    @inline(__always)
    func boolValue(at index: Int) -> Bool? {
        switch kind(index) {
        case .true: true
        case .false: false
        default: nil
        }
    }

    @inline(__always)
    func stringValue(at index: Int) throws(JSONSyntaxError) -> String? {
        kind(index) == .string ? try tape.string(at: index) : nil
    }

    @inline(__always)
    func intValue(at index: Int) throws(JSONSyntaxError) -> Int? {
        kind(index) == .number ? try tape.int(at: index) : nil
    }

    func integerValue<T: FixedWidthInteger>(at index: Int, as type: T.Type) throws(JSONSyntaxError) -> T? {
        kind(index) == .number ? try tape.integer(at: index, as: type) : nil
    }

    func floatingPointValue<T: BinaryFloatingPoint & LosslessStringConvertible>(at index: Int, as type: T.Type)
        throws(JSONSyntaxError) -> T?
    {
        kind(index) == .number ? try tape.floatingPoint(at: index, as: type) : nil
    }

    /// Base64 in a string, as `JSONDecoder`'s default `.base64` strategy.
    private func data(at index: Int, path: @autoclosure () -> [any CodingKey]) throws -> Data {
        if kind(index) == .null { throw mismatch(Data.self, at: index, path: path()) }
        guard let string = try stringValue(at: index) else { throw mismatch(String.self, at: index, path: path()) }
        guard let data = Data(base64Encoded: string) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: path(), debugDescription: "Encountered Data is not valid Base64."))
        }
        return data
    }

    // MARK: Errors

    /// Foundation's error for the value at `index` when it is not a `type`: `valueNotFound` for
    /// null, except for `Bool`, which Foundation reports as a type mismatch like any other value.
    func mismatch(_ type: Any.Type, at index: Int, path: [any CodingKey]) -> DecodingError {
        let kind = kind(index)
        if kind == .null && type != Bool.self {
            return DecodingError.valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: path, debugDescription: "Cannot get value of type \(type) -- found null value instead"))
        }
        return DecodingError.typeMismatch(
            type,
            DecodingError.Context(
                codingPath: path,
                debugDescription: "Expected to decode \(type) but found \(Self.describe(kind)) instead."
            ))
    }

    /// Foundation's words for a JSON type in error messages.
    static func describe(_ kind: JSONTape.Kind) -> String {
        switch kind {
        case .string: "a string"
        case .number: "number"
        case .true, .false: "bool"
        case .null: "null"
        case .object: "a dictionary"
        case .array: "an array"
        }
    }
}

// MARK: - Single value container

extension JSONTapeDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool { kind(index) == .null }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard let value = boolValue(at: index) else { throw mismatch(type, at: index, path: codingPath) }
        return value
    }

    func decode(_ type: String.Type) throws -> String {
        guard let value = try stringValue(at: index) else { throw mismatch(type, at: index, path: codingPath) }
        return value
    }

    func decode(_ type: Int.Type) throws -> Int {
        guard let value = try intValue(at: index) else { throw mismatch(type, at: index, path: codingPath) }
        return value
    }

    func decode(_ type: Double.Type) throws -> Double { try floatingPoint(type) }
    func decode(_ type: Float.Type) throws -> Float { try floatingPoint(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unwrap(index, as: type, parent: node, key: nil) }

    private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        guard let value = try integerValue(at: index, as: type) else {
            throw mismatch(type, at: index, path: codingPath)
        }
        return value
    }

    private func floatingPoint<T: BinaryFloatingPoint & LosslessStringConvertible>(_ type: T.Type) throws -> T {
        guard let value = try floatingPointValue(at: index, as: type) else {
            throw mismatch(type, at: index, path: codingPath)
        }
        return value
    }
}

// MARK: - Keyed container

struct JSONKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: JSONTapeDecoder
    /// The object's entry.
    let object: Int
    let node: JSONCodingPathNode?

    /// Checks the keys that are not plain ASCII, as Foundation decodes every key on opening an object.
    init(decoder: JSONTapeDecoder, object: Int, node: JSONCodingPathNode?) throws {
        self.decoder = decoder
        self.object = object
        self.node = node
        let tape = decoder.tape
        guard tape[object].flags != 0 else { return }
        var index = object + 1
        let end = Int(tape[object].first)
        while index < end {
            if tape[index].flags != 0 { _ = try tape.string(at: index) }
            index = tape.next(after: index + 1)
        }
    }

    var codingPath: [any CodingKey] { JSONCodingPathNode.path(node) }

    /// Each distinct key once, in document order.
    var allKeys: [Key] {
        let tape = decoder.tape
        var seen = Set<String>()
        var keys: [Key] = []
        var index = object + 1
        let end = Int(tape[object].first)
        while index < end {
            if let name = try? tape.string(at: index), seen.insert(name).inserted, let key = Key(stringValue: name) {
                keys.append(key)
            }
            index = tape.next(after: index + 1)
        }
        return keys
    }

    func contains(_ key: Key) -> Bool { decoder.tape.memberValue(in: object, named: key.stringValue) != nil }

    private func path(_ key: some CodingKey) -> [any CodingKey] { JSONCodingPathNode.path(node, appending: key) }

    private func requireValue(forKey key: some CodingKey) throws -> Int {
        guard let index = decoder.tape.memberValue(in: object, named: key.stringValue) else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."
                ))
        }
        return index
    }

    /// The value's entry, or nil when the key is absent or null.
    private func presentValue(forKey key: Key) -> Int? {
        guard let index = decoder.tape.memberValue(in: object, named: key.stringValue),
            decoder.tape[index].kind != .null
        else { return nil }
        return index
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        decoder.kind(try requireValue(forKey: key)) == .null
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        let index = try requireValue(forKey: key)
        guard let value = decoder.boolValue(at: index) else { throw decoder.mismatch(type, at: index, path: path(key)) }
        return value
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let index = try requireValue(forKey: key)
        guard let value = try decoder.stringValue(at: index) else {
            throw decoder.mismatch(type, at: index, path: path(key))
        }
        return value
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        let index = try requireValue(forKey: key)
        guard let value = try decoder.intValue(at: index) else {
            throw decoder.mismatch(type, at: index, path: path(key))
        }
        return value
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try floatingPoint(type, forKey: key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try floatingPoint(type, forKey: key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, forKey: key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, forKey: key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, forKey: key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, forKey: key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, forKey: key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, forKey: key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, forKey: key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, forKey: key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, forKey: key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.unwrap(requireValue(forKey: key), as: type, parent: node, key: key)
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let index = presentValue(forKey: key) else { return nil }
        guard let value = decoder.boolValue(at: index) else { throw decoder.mismatch(type, at: index, path: path(key)) }
        return value
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let index = presentValue(forKey: key) else { return nil }
        guard let value = try decoder.stringValue(at: index) else {
            throw decoder.mismatch(type, at: index, path: path(key))
        }
        return value
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        guard let index = presentValue(forKey: key) else { return nil }
        guard let value = try decoder.intValue(at: index) else {
            throw decoder.mismatch(type, at: index, path: path(key))
        }
        return value
    }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try floatingPointIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try floatingPointIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try integerIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
        try integerIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        try integerIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try integerIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try integerIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
        try integerIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        try integerIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        try integerIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        try integerIfPresent(type, forKey: key)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let index = presentValue(forKey: key) else { return nil }
        return try decoder.unwrap(index, as: type, parent: node, key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try decoder.keyedContainer(at: requireValue(forKey: key), node: JSONCodingPathNode(parent: node, key: key))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder.unkeyedContainer(at: requireValue(forKey: key), node: JSONCodingPathNode(parent: node, key: key))
    }

    func superDecoder() throws -> any Decoder { superDecoder(key: JSONSuperKey()) }
    func superDecoder(forKey key: Key) throws -> any Decoder { superDecoder(key: key) }

    /// A decoder for the key's value, or for null when the key is absent, as Foundation.
    private func superDecoder(key: some CodingKey) -> any Decoder {
        decoder.sibling(
            at: decoder.tape.memberValue(in: object, named: key.stringValue) ?? -1,
            node: JSONCodingPathNode(parent: node, key: key))
    }

    private func integer<T: FixedWidthInteger>(_ type: T.Type, forKey key: Key) throws -> T {
        let index = try requireValue(forKey: key)
        guard let value = try decoder.integerValue(at: index, as: type) else {
            throw decoder.mismatch(type, at: index, path: path(key))
        }
        return value
    }

    private func integerIfPresent<T: FixedWidthInteger>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let index = presentValue(forKey: key) else { return nil }
        guard let value = try decoder.integerValue(at: index, as: type) else {
            throw decoder.mismatch(type, at: index, path: path(key))
        }
        return value
    }

    private func floatingPoint<T: BinaryFloatingPoint & LosslessStringConvertible>(_ type: T.Type, forKey key: Key)
        throws -> T
    {
        let index = try requireValue(forKey: key)
        guard let value = try decoder.floatingPointValue(at: index, as: type) else {
            throw decoder.mismatch(type, at: index, path: path(key))
        }
        return value
    }

    private func floatingPointIfPresent<T: BinaryFloatingPoint & LosslessStringConvertible>(
        _ type: T.Type, forKey key: Key
    ) throws -> T? {
        guard let index = presentValue(forKey: key) else { return nil }
        guard let value = try decoder.floatingPointValue(at: index, as: type) else {
            throw decoder.mismatch(type, at: index, path: path(key))
        }
        return value
    }
}

// MARK: - Unkeyed container

struct JSONUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: JSONTapeDecoder
    let node: JSONCodingPathNode?
    let count: Int?
    private(set) var currentIndex = 0
    /// The entry of the element at `currentIndex`, while `cursor < end`.
    private var cursor: Int
    private let end: Int

    init(decoder: JSONTapeDecoder, array: Int, node: JSONCodingPathNode?) {
        self.decoder = decoder
        self.node = node
        let entry = decoder.tape[array]
        count = Int(entry.second)
        cursor = array + 1
        end = Int(entry.first)
    }

    var codingPath: [any CodingKey] { JSONCodingPathNode.path(node) }
    var isAtEnd: Bool { currentIndex >= count! }

    private var currentKey: JSONIndexKey { JSONIndexKey(index: currentIndex) }
    private var currentPath: [any CodingKey] { JSONCodingPathNode.path(node, appending: currentKey) }

    /// The next element's entry; at the end, Foundation's `valueNotFound` for `type`.
    private func next(_ type: Any.Type, message: String = "Unkeyed container is at end.") throws -> Int {
        guard cursor < end else {
            throw DecodingError.valueNotFound(
                type, DecodingError.Context(codingPath: currentPath, debugDescription: message))
        }
        return cursor
    }

    /// The next element's entry if there is one and it is not null.
    private var presentValue: Int? {
        guard cursor < end, decoder.tape[cursor].kind != .null else { return nil }
        return cursor
    }

    /// Past the current element. Foundation counts on past the end for `decodeIfPresent`, so do we.
    private mutating func advance() {
        currentIndex += 1
        if cursor < end { cursor = decoder.tape.next(after: cursor) }
    }

    mutating func decodeNil() throws -> Bool {
        guard decoder.kind(try next(Never.self)) == .null else { return false }
        advance()
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let index = try next(type)
        guard let value = decoder.boolValue(at: index) else {
            throw decoder.mismatch(type, at: index, path: currentPath)
        }
        advance()
        return value
    }

    mutating func decode(_ type: String.Type) throws -> String {
        let index = try next(type)
        guard let value = try decoder.stringValue(at: index) else {
            throw decoder.mismatch(type, at: index, path: currentPath)
        }
        advance()
        return value
    }

    mutating func decode(_ type: Int.Type) throws -> Int {
        let index = try next(type)
        guard let value = try decoder.intValue(at: index) else {
            throw decoder.mismatch(type, at: index, path: currentPath)
        }
        advance()
        return value
    }

    mutating func decode(_ type: Double.Type) throws -> Double { try floatingPoint(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try floatingPoint(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let value = try decoder.unwrap(next(type), as: type, parent: node, key: currentKey)
        advance()
        return value
    }

    mutating func decodeIfPresent(_ type: Bool.Type) throws -> Bool? {
        var value: Bool?
        if let index = presentValue {
            guard let bool = decoder.boolValue(at: index) else {
                throw decoder.mismatch(type, at: index, path: currentPath)
            }
            value = bool
        }
        advance()
        return value
    }

    mutating func decodeIfPresent(_ type: String.Type) throws -> String? {
        var value: String?
        if let index = presentValue {
            guard let string = try decoder.stringValue(at: index) else {
                throw decoder.mismatch(type, at: index, path: currentPath)
            }
            value = string
        }
        advance()
        return value
    }

    mutating func decodeIfPresent(_ type: Double.Type) throws -> Double? { try floatingPointIfPresent(type) }
    mutating func decodeIfPresent(_ type: Float.Type) throws -> Float? { try floatingPointIfPresent(type) }
    mutating func decodeIfPresent(_ type: Int.Type) throws -> Int? { try integerIfPresent(type) }
    mutating func decodeIfPresent(_ type: Int8.Type) throws -> Int8? { try integerIfPresent(type) }
    mutating func decodeIfPresent(_ type: Int16.Type) throws -> Int16? { try integerIfPresent(type) }
    mutating func decodeIfPresent(_ type: Int32.Type) throws -> Int32? { try integerIfPresent(type) }
    mutating func decodeIfPresent(_ type: Int64.Type) throws -> Int64? { try integerIfPresent(type) }
    mutating func decodeIfPresent(_ type: UInt.Type) throws -> UInt? { try integerIfPresent(type) }
    mutating func decodeIfPresent(_ type: UInt8.Type) throws -> UInt8? { try integerIfPresent(type) }
    mutating func decodeIfPresent(_ type: UInt16.Type) throws -> UInt16? { try integerIfPresent(type) }
    mutating func decodeIfPresent(_ type: UInt32.Type) throws -> UInt32? { try integerIfPresent(type) }
    mutating func decodeIfPresent(_ type: UInt64.Type) throws -> UInt64? { try integerIfPresent(type) }

    mutating func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
        var value: T?
        if let index = presentValue { value = try decoder.unwrap(index, as: type, parent: node, key: currentKey) }
        advance()
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let container: KeyedDecodingContainer<NestedKey> = try decoder.keyedContainer(
            at: next(KeyedDecodingContainer<NestedKey>.self), node: JSONCodingPathNode(parent: node, key: currentKey))
        advance()
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let container = try decoder.unkeyedContainer(
            at: next((any UnkeyedDecodingContainer).self), node: JSONCodingPathNode(parent: node, key: currentKey))
        advance()
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let index = try next((any Decoder).self, message: "Cannot get superDecoder() -- unkeyed container is at end.")
        let superDecoder = decoder.sibling(at: index, node: JSONCodingPathNode(parent: node, key: currentKey))
        advance()
        return superDecoder
    }

    private mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let index = try next(type)
        guard let value = try decoder.integerValue(at: index, as: type) else {
            throw decoder.mismatch(type, at: index, path: currentPath)
        }
        advance()
        return value
    }

    private mutating func floatingPoint<T: BinaryFloatingPoint & LosslessStringConvertible>(_ type: T.Type) throws
        -> T
    {
        let index = try next(type)
        guard let value = try decoder.floatingPointValue(at: index, as: type) else {
            throw decoder.mismatch(type, at: index, path: currentPath)
        }
        advance()
        return value
    }

    private mutating func integerIfPresent<T: FixedWidthInteger>(_ type: T.Type) throws -> T? {
        var value: T?
        if let index = presentValue {
            guard let integer = try decoder.integerValue(at: index, as: type) else {
                throw decoder.mismatch(type, at: index, path: currentPath)
            }
            value = integer
        }
        advance()
        return value
    }

    private mutating func floatingPointIfPresent<T: BinaryFloatingPoint & LosslessStringConvertible>(
        _ type: T.Type
    ) throws -> T? {
        var value: T?
        if let index = presentValue {
            guard let number = try decoder.floatingPointValue(at: index, as: type) else {
                throw decoder.mismatch(type, at: index, path: currentPath)
            }
            value = number
        }
        advance()
        return value
    }
}
