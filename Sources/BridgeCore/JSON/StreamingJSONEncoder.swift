import Foundation

/// Compact JSON written straight into a byte buffer while the value encodes itself.
///
/// It exists because Foundation's `JSONEncoder` dominated the daemon's per-delivery store cost:
/// every delivery re-encodes the run's state, its card's session, the progress floor and the
/// dispatch gate for SQLite, and `JSONEncoder` first builds a tree of boxed values, then sorts and
/// serializes it. This encoder has no intermediate tree: each container writes its bracket when
/// it is requested, each key and value as it is encoded, and closes when its parent (or the end of
/// the value) moves on.
///
/// The output is what `JSONDecoder` (default strategies) reads back to an equal value:
/// - members come out in the order the type encodes them (declaration order for synthesized
///   conformances); `Dictionary` keyed by `String` or `Int`, and `JSONValue` objects, come out
///   sorted by key, so the same value always gives the same bytes;
/// - `Data` is a base64 string, `URL` its `absoluteString`, `Decimal` a number, `Date` whatever its
///   own `Codable` writes (`JSONEncoder`'s `.deferredToDate`);
/// - a non-finite `Float` or `Double` throws `EncodingError.invalidValue`, as `JSONEncoder` does.
public struct StreamingJSONEncoder: Sendable {
    /// Bytes reserved up front; the buffer grows past it as needed.
    public var initialCapacity: Int
    /// Handed to every value as `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    public init(initialCapacity: Int = 1_024, userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.initialCapacity = initialCapacity
        self.userInfo = userInfo
    }

    /// The value as compact UTF-8 JSON.
    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        try write(value).bytes.array
    }

    /// The value as compact JSON text.
    public func encodeToString<T: Encodable>(_ value: T) throws -> String {
        try write(value).bytes.string
    }

    private func write<T: Encodable>(_ value: T) throws -> StreamingJSONWriter {
        let writer = StreamingJSONWriter(capacity: initialCapacity, userInfo: userInfo)
        try writer.encodeValue(value, depth: 0)
        if let failure = writer.failure { throw failure }
        if writer.bytes.count == 0 {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        return writer
    }
}

// MARK: - Byte output shared with JSONValue.canonicalString

/// A growable byte buffer that JSON text is appended to: the one escaping and number printing that
/// both the streaming encoder and `JSONValue.canonicalString` use.
///
/// Not an `Array`: JSON is written in many small pieces, and an array checks uniqueness and
/// capacity generically on every append; here an append is a capacity check and a copy.
struct JSONByteBuffer: ~Copyable {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let comma = UInt8(ascii: ",")
    static let colon = UInt8(ascii: ":")

    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    /// The bytes written so far, copied out.
    var array: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    var data: Data { Data(buffer: UnsafeBufferPointer(start: base, count: count)) }

    /// The bytes written so far as text (they are UTF-8: every piece came from a `String`).
    var string: String { String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self) }

    subscript(index: Int) -> UInt8 {
        precondition(index >= 0 && index < count, "JSONByteBuffer index out of range")
        return base[index]
    }

    mutating func removeLast(_ length: Int) {
        precondition(length <= count, "JSONByteBuffer.removeLast past the start")
        count -= length
    }

    /// Makes room for `length` more bytes.
    @inline(__always)
    private mutating func reserve(_ length: Int) {
        if count + length > capacity { grow(to: count + length) }
    }

    private mutating func grow(to needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (base + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    mutating func appendASCII(_ text: StaticString) {
        text.withUTF8Buffer { append($0) }
    }

    /// The UTF-8 of `text` as it is, unquoted (a number's description).
    mutating func appendRaw(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    /// `"text"`, escaping `"` `\` and the controls below 0x20 (`\n` `\r` `\t` by name, the rest as
    /// `\u00xx` in lowercase hex); every other scalar, non-ASCII included, is copied as UTF-8.
    /// Runs that need no escape are copied in one go.
    mutating func appendString(_ text: String) {
        append(Self.quote)
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { appendEscaped($0) }
        if copied == nil {
            var text = text
            text.withUTF8 { appendEscaped($0) }
        }
        append(Self.quote)
    }

    /// Scanning bytes is the same as scanning scalars here: every byte of a multi-byte UTF-8
    /// sequence is 0x80 or above, so only ASCII bytes can need an escape.
    private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        reserve(utf8.count + 1)
        var runStart = 0
        var index = 0
        let end = utf8.count
        while index < end {
            let byte = utf8[index]
            if byte >= 0x20 && byte != Self.quote && byte != Self.backslash {
                index += 1
                continue
            }
            if runStart < index { append(UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
            append(Self.backslash)
            switch byte {
            case Self.quote, Self.backslash: append(byte)
            case UInt8(ascii: "\n"): append(UInt8(ascii: "n"))
            case UInt8(ascii: "\r"): append(UInt8(ascii: "r"))
            case UInt8(ascii: "\t"): append(UInt8(ascii: "t"))
            default:
                appendASCII("u00")
                append(Self.hexDigit(byte >> 4))
                append(Self.hexDigit(byte & 0xF))
            }
            index += 1
            runStart = index
        }
        if runStart < end { append(UnsafeBufferPointer(rebasing: utf8[runStart..<end])) }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// A finite double: integral values below 2^53 as their digits (what the description minus
    /// its `.0` says, without formatting a string; -0 keeps its sign), others in Swift's shortest
    /// round-tripping form.
    mutating func appendFiniteDouble(_ value: Double) {
        if value.rounded(.towardZero) == value && value.magnitude < 9_007_199_254_740_992 && value != 0 {
            appendInteger(Int64(value))
        } else {
            appendShortestForm(value.description)
        }
    }

    /// A number's description without a trailing `.0` (`3`, as `JSONEncoder` writes).
    mutating func appendShortestForm(_ description: String) {
        let start = count
        appendRaw(description)
        if count - start > 2 && self[count - 1] == UInt8(ascii: "0") && self[count - 2] == UInt8(ascii: ".") {
            removeLast(2)
        }
    }

    mutating func appendInteger<Integer: BinaryInteger>(_ value: Integer) {
        if value < 0 {
            append(UInt8(ascii: "-"))
            appendDigits(UInt64(value.magnitude))
        } else {
            appendDigits(UInt64(value))
        }
    }

    /// Decimal digits, written backwards straight into the buffer.
    mutating func appendDigits(_ value: UInt64) {
        var length = 1
        var limit: UInt64 = 10
        while length < 20 && value >= limit {
            length += 1
            limit = limit &* 10
        }
        reserve(length)
        var remaining = value
        var position = count + length
        repeat {
            let (quotient, digit) = remaining.quotientAndRemainder(dividingBy: 10)
            position -= 1
            base[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: digit)
            remaining = quotient
        } while remaining > 0
        count += length
    }
}

// MARK: - Writer

/// One open container (or pending `superEncoder` slot) of the value being written.
struct StreamingJSONFrame {
    enum Kind { case object, array, slot }

    var kind: Kind
    /// Members or elements written so far: a comma goes before every one after the first.
    var count: Int
    /// The buffer's length when it opened: with its level, what identifies it to its containers,
    /// since a later sibling may open at the same level. For a slot, where its value starts.
    var start: Int
    /// The key of the member being written, for `codingPath`; nil in arrays and slots.
    var key: (any CodingKey)?
}

/// The buffer and the stack of open containers that every encoder and container of one
/// `encode` call shares.
///
/// Closing is lazy: a container is closed when something is next written to a container below it
/// (or its value's `encode(to:)` returns), so a nested container may be abandoned and the parent
/// continued, as `Codable` allows.
final class StreamingJSONWriter {
    // The buffer and the stack live behind pointers: a class's stored `var` pays a dynamic
    // exclusivity check on every access, which was a fifth of the encoding time; a pointee pays
    // none. Only this writer holds them.
    private let bytesStorage: UnsafeMutablePointer<JSONByteBuffer>
    private let framesStorage: UnsafeMutablePointer<[StreamingJSONFrame]>

    var bytes: JSONByteBuffer {
        unsafeAddress { UnsafePointer(bytesStorage) }
        unsafeMutableAddress { bytesStorage }
    }

    var frames: [StreamingJSONFrame] {
        unsafeAddress { UnsafePointer(framesStorage) }
        unsafeMutableAddress { framesStorage }
    }

    /// A misuse of the `Encoder` protocol (a second value into one encoder, a stale container),
    /// thrown when `encode` returns since container requests cannot throw.
    var failure: EncodingError?
    let userInfo: [CodingUserInfoKey: Any]

    init(capacity: Int, userInfo: [CodingUserInfoKey: any Sendable]) {
        bytesStorage = .allocate(capacity: 1)
        bytesStorage.initialize(to: JSONByteBuffer(capacity: capacity))
        var frames: [StreamingJSONFrame] = []
        frames.reserveCapacity(8)
        framesStorage = .allocate(capacity: 1)
        framesStorage.initialize(to: frames)
        self.userInfo = userInfo
    }

    deinit {
        bytesStorage.deinitialize(count: 1)
        bytesStorage.deallocate()
        framesStorage.deinitialize(count: 1)
        framesStorage.deallocate()
    }

    // MARK: Structure

    /// Writes the closing brackets of every container at `level` and deeper.
    func close(downTo level: Int) {
        while frames.count > level {
            let frame = frames.removeLast()
            switch frame.kind {
            case .object: bytes.append(UInt8(ascii: "}"))
            case .array: bytes.append(UInt8(ascii: "]"))
            // A super-encoder nobody encoded into still holds a value's place.
            case .slot: if bytes.count == frame.start { bytes.appendASCII("{}") }
            }
        }
    }

    /// True while the container that opened at `level` when the buffer was `start` long is open.
    func isOpen(level: Int, start: Int) -> Bool {
        frames.count > level && frames[level].start == start
    }

    /// Starts the next member or element of the container at `level` (opened at `start`): closes
    /// what is open above it, and writes the separating comma.
    ///
    /// A container written to after its parent moved on cannot be honoured by a stream (the
    /// bytes after it are written): that fails the whole `encode` instead of writing bad JSON.
    func beginElement(at level: Int, start: Int) {
        guard isOpen(level: level, start: start) else {
            fail("A container was written to after its parent went on to other members.")
            return
        }
        if frames.count > level + 1 { close(downTo: level + 1) }
        if frames[level].count > 0 { bytes.append(JSONByteBuffer.comma) }
        frames[level].count += 1
    }

    func beginMember(_ key: String, at level: Int, start: Int) {
        beginElement(at: level, start: start)
        bytes.appendString(key)
        bytes.append(JSONByteBuffer.colon)
    }

    /// Opens an object or array for the value whose encoder sits at `depth` and started at
    /// `start`; a second request of the same kind returns the one already open, as `JSONEncoder`
    /// does (a subclass's `encode(to:)` after its superclass's, on one encoder).
    func openContainer(_ kind: StreamingJSONFrame.Kind, depth: Int, start: Int) -> (level: Int, start: Int) {
        if isOpen(level: depth, start: start) {
            if frames[depth].kind != kind { fail("Requested a keyed and an unkeyed container from one encoder.") }
            close(downTo: depth + 1)
            return (depth, start)
        }
        if frames.count != depth || bytes.count != start {
            fail("Requested a container from an encoder that already encoded its value.")
        }
        return push(kind)
    }

    /// Opens a container as the value of a member or element just begun.
    func push(_ kind: StreamingJSONFrame.Kind) -> (level: Int, start: Int) {
        let start = bytes.count
        frames.append(StreamingJSONFrame(kind: kind, count: 0, start: start, key: nil))
        bytes.append(kind == .object ? UInt8(ascii: "{") : UInt8(ascii: "["))
        return (frames.count - 1, start)
    }

    /// Records the key of the member just begun in the object at `level`, for `codingPath`.
    func setKey(_ key: any CodingKey, level: Int, start: Int) {
        if isOpen(level: level, start: start) { frames[level].key = key }
    }

    /// Reserves the value of a member or element just begun for a `superEncoder`.
    func pushSlot() -> StreamingJSONEncoderImpl {
        frames.append(StreamingJSONFrame(kind: .slot, count: 0, start: bytes.count, key: nil))
        return StreamingJSONEncoderImpl(writer: self, depth: frames.count, start: bytes.count)
    }

    /// Checks that a single value may go where the encoder at `depth` writes.
    func beginSingleValue(depth: Int, start: Int) throws {
        guard frames.count == depth, bytes.count == start else {
            throw EncodingError.invalidValue(
                (),
                context(
                    depth: depth, "Attempt to encode a second value, or a value after a container, into one encoder."))
        }
    }

    func fail(_ description: String) {
        if failure == nil {
            failure = .invalidValue((), EncodingError.Context(codingPath: [], debugDescription: description))
        }
    }

    // MARK: Coding path

    /// The keys leading to the value whose encoder (or container) sits at `depth`.
    func codingPath(depth: Int) -> [any CodingKey] {
        var path: [any CodingKey] = []
        for frame in frames.prefix(depth) {
            switch frame.kind {
            case .object: if let key = frame.key { path.append(key) }
            case .array: path.append(StreamingJSONKey(index: frame.count - 1))
            case .slot: break
            }
        }
        return path
    }

    func context(depth: Int, key: (any CodingKey)? = nil, _ description: String) -> EncodingError.Context {
        var path = codingPath(depth: depth)
        if let key { path.append(key) }
        return EncodingError.Context(codingPath: path, debugDescription: description)
    }

    // MARK: Values

    /// Writes one value where the encoder at `depth` writes (a member or element was just begun,
    /// or this is the top level).
    func encodeValue<T: Encodable>(_ value: T, depth: Int) throws {
        // The common leaves skip `encode(to:)`; the special cases are `JSONEncoder`'s.
        if T.self == String.self {
            bytes.appendString(value as! String)
        } else if T.self == Int.self {
            bytes.appendInteger(value as! Int)
        } else if T.self == Double.self {
            try appendDouble(value as! Double, depth: depth)
        } else if T.self == Bool.self {
            bytes.appendASCII((value as! Bool) ? "true" : "false")
        } else if T.self == JSONValue.self {
            try appendJSONValue(value as! JSONValue, depth: depth)
        } else if T.self == Data.self {
            bytes.appendString((value as! Data).base64EncodedString())
        } else if T.self == URL.self {
            bytes.appendString((value as! URL).absoluteString)
        } else if T.self == Decimal.self {
            let decimal = value as! Decimal
            guard decimal.isFinite else {
                throw EncodingError.invalidValue(
                    decimal, context(depth: depth, "Unable to encode Decimal.nan in JSON."))
            }
            bytes.appendRaw(decimal.description)
        } else if MemoryLayout<T>.size == MemoryLayout<[Int: Int]>.size,
            let dictionary = value as? any StreamingJSONSortedDictionary, try dictionary.encodeSorted(self)
        {
            // Every `Dictionary` is one reference wide: the size test keeps the runtime's
            // conformance lookup, which costs more than writing a small struct, off most values.
            return
        } else {
            let start = bytes.count
            try value.encode(to: StreamingJSONEncoderImpl(writer: self, depth: depth, start: start))
            if frames.count > depth {
                close(downTo: depth)
            } else if bytes.count == start {
                // A value that encoded nothing is an empty object, as with `JSONEncoder`; at the
                // top level `encode` throws instead.
                if depth > 0 { bytes.appendASCII("{}") }
            }
        }
    }

    func appendDouble(_ value: Double, depth: Int, key: (any CodingKey)? = nil) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value, context(depth: depth, key: key, "Unable to encode Double.\(value) directly in JSON."))
        }
        bytes.appendFiniteDouble(value)
    }

    func appendFloat(_ value: Float, depth: Int, key: (any CodingKey)? = nil) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value, context(depth: depth, key: key, "Unable to encode Float.\(value) directly in JSON."))
        }
        bytes.appendShortestForm(value.description)
    }

    /// `JSONValue`'s own `encode(to:)`, without the containers: integral numbers as integers, the
    /// rest as doubles, objects sorted by key.
    func appendJSONValue(_ value: JSONValue, depth: Int) throws {
        switch value {
        case .null: bytes.appendASCII("null")
        case .bool(let flag): bytes.appendASCII(flag ? "true" : "false")
        case .number(let number):
            if let integer = value.intValue {
                bytes.appendInteger(integer)
            } else {
                try appendDouble(number, depth: depth)
            }
        case .string(let text): bytes.appendString(text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(JSONByteBuffer.comma) }
                try appendJSONValue(element, depth: depth)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { bytes.append(JSONByteBuffer.comma) }
                bytes.appendString(member.key)
                bytes.append(JSONByteBuffer.colon)
                try appendJSONValue(member.value, depth: depth)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }
}

/// Keys for coding paths: array indexes, `super`, dictionary keys.
struct StreamingJSONKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }

    init(index: Int) {
        self.stringValue = "Index \(index)"
        self.intValue = index
    }

    static let `super` = StreamingJSONKey(stringValue: "super")
}

// MARK: - Dictionaries

/// Dictionaries keyed by `String` or `Int` are written sorted by key: their own `encode(to:)`
/// follows hash order, which changes from one process to the next.
protocol StreamingJSONSortedDictionary {
    /// Writes the dictionary as an object sorted by key and returns true; false for other keys.
    func encodeSorted(_ writer: StreamingJSONWriter) throws -> Bool
}

extension Dictionary: StreamingJSONSortedDictionary where Value: Encodable {
    // Sorting the keys alone, as an array of a concrete type, and looking each value up is much
    // cheaper than sorting (key, value) pairs of an unspecialized `Value`. The bit casts only
    // restate what the `Key.self` check proved (a cast proper would copy the dictionary).
    func encodeSorted(_ writer: StreamingJSONWriter) throws -> Bool {
        if Key.self == String.self {
            let dictionary = unsafeBitCast(self, to: [String: Value].self)
            var keys = Array(dictionary.keys)
            keys.sort()
            let object = writer.push(.object)
            for key in keys {
                writer.beginMember(key, of: object)
                try writer.encodeValue(dictionary[key]!, depth: object.level + 1)
            }
            writer.close(downTo: object.level)
            return true
        }
        if Key.self == Int.self {
            // `Dictionary` writes Int keys as strings ("123"); `JSONDecoder` reads them back.
            let dictionary = unsafeBitCast(self, to: [Int: Value].self)
            var keys = Array(dictionary.keys)
            keys.sort()
            let object = writer.push(.object)
            for key in keys {
                writer.beginMember(String(key), of: object)
                try writer.encodeValue(dictionary[key]!, depth: object.level + 1)
            }
            writer.close(downTo: object.level)
            return true
        }
        return false
    }
}

extension StreamingJSONWriter {
    /// Begins a member of a dictionary's object, recording its key for `codingPath`.
    func beginMember(_ key: String, of object: (level: Int, start: Int)) {
        beginMember(key, at: object.level, start: object.start)
        frames[object.level].key = StreamingJSONKey(stringValue: key)
    }
}

// MARK: - Encoder

/// The `Encoder` handed to each value: where in the buffer and the container stack it writes.
/// Three words, so the existential holds it without an allocation.
struct StreamingJSONEncoderImpl: Encoder {
    let writer: StreamingJSONWriter
    /// The container stack's height when this value starts: its container goes at this index.
    let depth: Int
    /// The buffer's length when this value starts: nothing written since means nothing encoded.
    let start: Int

    var codingPath: [any CodingKey] { writer.codingPath(depth: depth) }
    var userInfo: [CodingUserInfoKey: Any] { writer.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let (level, start) = writer.openContainer(.object, depth: depth, start: start)
        return KeyedEncodingContainer(StreamingJSONKeyedContainer<Key>(writer: writer, level: level, start: start))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let (level, start) = writer.openContainer(.array, depth: depth, start: start)
        return StreamingJSONUnkeyedContainer(writer: writer, level: level, start: start)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        StreamingJSONSingleValueContainer(writer: writer, depth: depth, start: start)
    }
}

struct StreamingJSONKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: StreamingJSONWriter
    /// This object's index in the container stack.
    let level: Int
    /// Where it opened in the buffer: which object at `level` it is.
    let start: Int

    var codingPath: [any CodingKey] { writer.codingPath(depth: level) }

    private func begin(_ key: Key) {
        writer.beginMember(key.stringValue, at: level, start: start)
    }

    mutating func encodeNil(forKey key: Key) throws {
        begin(key)
        writer.bytes.appendASCII("null")
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        begin(key)
        writer.bytes.appendASCII(value ? "true" : "false")
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        begin(key)
        writer.bytes.appendString(value)
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        begin(key)
        try writer.appendDouble(value, depth: level, key: key)
    }

    mutating func encode(_ value: Float, forKey key: Key) throws {
        begin(key)
        try writer.appendFloat(value, depth: level, key: key)
    }

    mutating func encode(_ value: Int, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { integer(value, key) }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128, forKey key: Key) throws {
        begin(key)
        writer.bytes.appendRaw(value.description)
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128, forKey key: Key) throws {
        begin(key)
        writer.bytes.appendRaw(value.description)
    }

    private func integer<Integer: FixedWidthInteger>(_ value: Integer, _ key: Key) {
        begin(key)
        writer.bytes.appendInteger(value)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        begin(key)
        writer.setKey(key, level: level, start: start)
        try writer.encodeValue(value, depth: level + 1)
    }

    // Synthesized conformances write every optional through these; the protocol's defaults would
    // take a generic detour for each.
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) }
    }

    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) }
    }

    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) }
    }

    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
        if let value { integer(value, key) }
    }

    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        begin(key)
        writer.setKey(key, level: level, start: start)
        let nested = writer.push(.object)
        return KeyedEncodingContainer(
            StreamingJSONKeyedContainer<NestedKey>(writer: writer, level: nested.level, start: nested.start))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        begin(key)
        writer.setKey(key, level: level, start: start)
        let nested = writer.push(.array)
        return StreamingJSONUnkeyedContainer(writer: writer, level: nested.level, start: nested.start)
    }

    mutating func superEncoder() -> any Encoder {
        writer.beginMember(StreamingJSONKey.super.stringValue, at: level, start: start)
        writer.setKey(StreamingJSONKey.super, level: level, start: start)
        return writer.pushSlot()
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        begin(key)
        writer.setKey(key, level: level, start: start)
        return writer.pushSlot()
    }
}

struct StreamingJSONUnkeyedContainer: UnkeyedEncodingContainer {
    let writer: StreamingJSONWriter
    /// This array's index in the container stack.
    let level: Int
    /// Where it opened in the buffer: which array at `level` it is.
    let start: Int

    var codingPath: [any CodingKey] { writer.codingPath(depth: level) }

    var count: Int {
        writer.isOpen(level: level, start: start) ? writer.frames[level].count : 0
    }

    private func begin() {
        writer.beginElement(at: level, start: start)
    }

    /// The key of the element just begun, for errors.
    private var currentKey: StreamingJSONKey { StreamingJSONKey(index: count - 1) }

    mutating func encodeNil() throws {
        begin()
        writer.bytes.appendASCII("null")
    }

    mutating func encode(_ value: Bool) throws {
        begin()
        writer.bytes.appendASCII(value ? "true" : "false")
    }

    mutating func encode(_ value: String) throws {
        begin()
        writer.bytes.appendString(value)
    }

    mutating func encode(_ value: Double) throws {
        begin()
        try writer.appendDouble(value, depth: level, key: currentKey)
    }

    mutating func encode(_ value: Float) throws {
        begin()
        try writer.appendFloat(value, depth: level, key: currentKey)
    }

    mutating func encode(_ value: Int) throws { integer(value) }
    mutating func encode(_ value: Int8) throws { integer(value) }
    mutating func encode(_ value: Int16) throws { integer(value) }
    mutating func encode(_ value: Int32) throws { integer(value) }
    mutating func encode(_ value: Int64) throws { integer(value) }
    mutating func encode(_ value: UInt) throws { integer(value) }
    mutating func encode(_ value: UInt8) throws { integer(value) }
    mutating func encode(_ value: UInt16) throws { integer(value) }
    mutating func encode(_ value: UInt32) throws { integer(value) }
    mutating func encode(_ value: UInt64) throws { integer(value) }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws {
        begin()
        writer.bytes.appendRaw(value.description)
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws {
        begin()
        writer.bytes.appendRaw(value.description)
    }

    private func integer<Integer: FixedWidthInteger>(_ value: Integer) {
        begin()
        writer.bytes.appendInteger(value)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        begin()
        try writer.encodeValue(value, depth: level + 1)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        begin()
        let nested = writer.push(.object)
        return KeyedEncodingContainer(
            StreamingJSONKeyedContainer<NestedKey>(writer: writer, level: nested.level, start: nested.start))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        begin()
        let nested = writer.push(.array)
        return StreamingJSONUnkeyedContainer(writer: writer, level: nested.level, start: nested.start)
    }

    mutating func superEncoder() -> any Encoder {
        begin()
        return writer.pushSlot()
    }
}

struct StreamingJSONSingleValueContainer: SingleValueEncodingContainer {
    let writer: StreamingJSONWriter
    let depth: Int
    let start: Int

    var codingPath: [any CodingKey] { writer.codingPath(depth: depth) }

    private func begin() throws {
        try writer.beginSingleValue(depth: depth, start: start)
    }

    mutating func encodeNil() throws {
        try begin()
        writer.bytes.appendASCII("null")
    }

    mutating func encode(_ value: Bool) throws {
        try begin()
        writer.bytes.appendASCII(value ? "true" : "false")
    }

    mutating func encode(_ value: String) throws {
        try begin()
        writer.bytes.appendString(value)
    }

    mutating func encode(_ value: Double) throws {
        try begin()
        try writer.appendDouble(value, depth: depth)
    }

    mutating func encode(_ value: Float) throws {
        try begin()
        try writer.appendFloat(value, depth: depth)
    }

    mutating func encode(_ value: Int) throws { try integer(value) }
    mutating func encode(_ value: Int8) throws { try integer(value) }
    mutating func encode(_ value: Int16) throws { try integer(value) }
    mutating func encode(_ value: Int32) throws { try integer(value) }
    mutating func encode(_ value: Int64) throws { try integer(value) }
    mutating func encode(_ value: UInt) throws { try integer(value) }
    mutating func encode(_ value: UInt8) throws { try integer(value) }
    mutating func encode(_ value: UInt16) throws { try integer(value) }
    mutating func encode(_ value: UInt32) throws { try integer(value) }
    mutating func encode(_ value: UInt64) throws { try integer(value) }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws {
        try begin()
        writer.bytes.appendRaw(value.description)
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws {
        try begin()
        writer.bytes.appendRaw(value.description)
    }

    private func integer<Integer: FixedWidthInteger>(_ value: Integer) throws {
        try begin()
        writer.bytes.appendInteger(value)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try begin()
        try writer.encodeValue(value, depth: depth)
    }
}
