import Foundation

/// A growable byte buffer that JSON text is appended to: the one escaping and number printing that
/// the core's hand-written writers (`JSONValue.canonicalString`, the stored run state) use.
///
/// Not an `Array`: JSON is written in many small pieces, and an array checks uniqueness and
/// capacity generically on every append; here an append is a capacity check and a copy. This is
/// the one place in the JSON code that holds an unsafe pointer: it owns its allocation (not
/// copyable, freed in `deinit`), every write reserves first, and nothing outside reads the pointer.
///
/// Reading JSON is Foundation's (`JSONDecoder`, `JSONSerialization`); only writing is done here.
///
/// It earns its place by the store's two hottest rows, which every group commit writes for each
/// run and card it touched: `RunStateJSON` and `ActivitySessionJSON` write them on this buffer
/// instead of through `JSONEncoder`. `dispatch-bench --stored-json` (release) times both on the
/// run states and cards of a scripted run halfway through; three runs on a shared machine: a run
/// state (2.2 KB) 15.3, 18.4 and 17.9 times as fast as the store's `JSONEncoder` (5.7 µs against
/// 102 µs on the quietest run), a card session (1.1 KB) 15.4, 16.7 and 13.5 times (5.7 µs against
/// 77 µs). Run it again before replacing either writer.
struct JSONByteBuffer: ~Copyable {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let comma = UInt8(ascii: ",")
    static let colon = UInt8(ascii: ":")

    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Bytes written so far.
    var count: Int { written }
    private var written = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    /// The bytes written so far, copied out.
    var array: [UInt8] { Array(UnsafeBufferPointer(start: base, count: written)) }

    var data: Data { Data(buffer: UnsafeBufferPointer(start: base, count: written)) }

    /// The bytes written so far as text (they are UTF-8: every piece came from a `String`).
    var string: String { String(decoding: UnsafeBufferPointer(start: base, count: written), as: UTF8.self) }

    subscript(index: Int) -> UInt8 {
        precondition(index >= 0 && index < written, "JSONByteBuffer index out of range")
        return base[index]
    }

    mutating func removeLast(_ length: Int) {
        precondition(length >= 0 && length <= written, "JSONByteBuffer.removeLast past the start")
        written -= length
    }

    /// Makes room for `length` more bytes.
    private mutating func reserve(_ length: Int) {
        if written + length > capacity { grow(to: written + length) }
    }

    private mutating func grow(to needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: written)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[written] = byte
        written += 1
    }

    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (base + written).initialize(from: source, count: bytes.count)
        written += bytes.count
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
        let start = written
        appendRaw(description)
        if written - start > 2 && self[written - 1] == UInt8(ascii: "0") && self[written - 2] == UInt8(ascii: ".") {
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
        var position = written + length
        repeat {
            let (quotient, digit) = remaining.quotientAndRemainder(dividingBy: 10)
            position -= 1
            base[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: digit)
            remaining = quotient
        } while remaining > 0
        written += length
    }
}
