import Foundation

/// One JSON document scanned into a flat array of entries, for `FastJSONDecoder`.
///
/// The scan is a single pass over the UTF-8 bytes that checks the document's structure exactly as
/// Foundation's `JSONDecoder` scanner does, and allocates no `String`: objects, arrays, `true`,
/// `false` and `null` are checked in full, while the contents of strings and numbers are only
/// delimited and checked when a value is decoded, so that a malformed value nobody reads does not
/// fail the document (Foundation's behaviour too). Like Foundation, one trailing comma is accepted
/// in arrays and objects, and at most 512 containers may be nested.
///
/// Entries are in document order. A container's entry records the index just past its last
/// descendant, so unwanted values are skipped in O(1); an object's children alternate key, value.
final class JSONTape {
    enum Kind: UInt8 {
        case object, array, string, number, `true`, `false`, null
    }

    /// 12 bytes. `first`/`second` are the byte offset and length of a string's contents (without
    /// quotes) or of a number, and for a container the index past its last descendant and the
    /// number of elements (members for an object).
    struct Entry {
        var kind: Kind
        var flags: UInt8
        var first: UInt32
        var second: UInt32
    }

    /// `Entry.flags` of a string: what its raw bytes contain, to pick the cheapest decoding. An
    /// object's flags are the union of its keys', so that plain keys need no check on opening it.
    enum StringFlags {
        static let backslash: UInt8 = 1
        static let controlCharacter: UInt8 = 2
        static let nonASCII: UInt8 = 4
    }

    /// The document's UTF-8 bytes: borrowed from the caller while decoding, copied by
    /// `takeOwnershipOfBytes()` if a decoder or container outlives the call. Kept in a cell rather
    /// than a `var`, which would cost a dynamic exclusivity check on every read.
    private let bytesCell: UnsafeMutablePointer<UnsafePointer<UInt8>>
    let byteCount: Int
    private var ownsBytes = false
    let entries: UnsafeMutablePointer<Entry>
    let entryCount: Int
    /// Set when a second decoder shares this tape (`superDecoder`), for `takeOwnershipOfBytes`.
    var isShared = false

    @inline(__always)
    var bytes: UnsafePointer<UInt8> { bytesCell.pointee }

    /// Scans `buffer`, which must stay valid until `takeOwnershipOfBytes()` or the tape's end.
    init(scanning buffer: UnsafeRawBufferPointer) throws(JSONSyntaxError) {
        guard buffer.count < Int(UInt32.max) else { throw JSONSyntaxError(.documentTooLarge, at: 0) }
        // No bytes (not even whitespace) is never JSON.
        guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), !buffer.isEmpty else {
            throw JSONSyntaxError(.unexpectedEndOfFile, at: 0)
        }
        var scanner = Scanner(bytes: base, count: buffer.count)
        do {
            try scanner.scanDocument()
        } catch {
            scanner.entries.deallocate()
            throw error
        }
        bytesCell = .allocate(capacity: 1)
        bytesCell.initialize(to: base)
        byteCount = buffer.count
        entries = scanner.entries
        entryCount = scanner.entryCount
    }

    deinit {
        entries.deallocate()
        if ownsBytes { UnsafeMutablePointer(mutating: bytes).deallocate() }
        bytesCell.deallocate()
    }

    /// Copies the borrowed bytes, for a decoder or container that escaped `decode`.
    func takeOwnershipOfBytes() {
        guard !ownsBytes else { return }
        let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: byteCount)
        copy.initialize(from: bytes, count: byteCount)
        bytesCell.pointee = UnsafePointer(copy)
        ownsBytes = true
    }

    @inline(__always)
    subscript(index: Int) -> Entry {
        entries[index]
    }

    /// The index of the value after the one at `index` (its next sibling, or its parent's end).
    @inline(__always)
    func next(after index: Int) -> Int {
        let entry = entries[index]
        switch entry.kind {
        case .object, .array: return Int(entry.first)
        default: return index + 1
        }
    }

    /// The raw bytes of a string's contents or of a number.
    @inline(__always)
    func rawBytes(of entry: Entry) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: bytes + Int(entry.first), count: Int(entry.second))
    }
}

/// Where and why a document is not JSON, or a string or number in it is not valid.
///
/// Like Foundation's internal `JSONError`, an error found while decoding a value passes through the
/// initialisers of the types being decoded as is (`WebhookDecoder` relies on this for integers that
/// do not fit); `FastJSONDecoder.decode` then throws it as the `underlyingError` of a
/// `DecodingError.dataCorrupted` with an empty coding path, as `JSONDecoder` does.
struct JSONSyntaxError: Error, CustomStringConvertible {
    enum Reason: String {
        case unexpectedEndOfFile = "unexpected end of input"
        case unexpectedCharacter = "unexpected character"
        case tooDeeplyNested = "more than 512 nested arrays and objects"
        case invalidUnicodeEscape = "invalid \\u escape"
        case invalidEscape = "invalid escape sequence"
        case controlCharacterInString = "unescaped control character in a string"
        case invalidUTF8 = "invalid UTF-8 in a string"
        case invalidNumber = "invalid number"
        case numberOutOfRange = "number not representable in the requested type"
        case documentTooLarge = "document larger than 4 GiB"
    }

    var reason: Reason
    /// Byte offset in the UTF-8 document.
    var offset: Int

    init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    var description: String { "\(reason.rawValue) at byte \(offset)" }
}

// MARK: - Scanner

extension JSONTape {
    private struct Scanner {
        let bytes: UnsafePointer<UInt8>
        let end: Int
        var position = 0
        var entries: UnsafeMutablePointer<Entry>
        var entryCount = 0
        var entryCapacity: Int

        /// Foundation's limit: the 513th nested container fails.
        static let maximumDepth = 512

        init(bytes: UnsafePointer<UInt8>, count: Int) {
            self.bytes = bytes
            self.end = count
            // Pretty-printed webhook bodies hold about one entry per 15 bytes; compact ones grow it.
            entryCapacity = count / 12 + 16
            entries = .allocate(capacity: entryCapacity)
        }

        mutating func scanDocument() throws(JSONSyntaxError) {
            try scanValue(depth: 0)
            skipWhitespace()
            guard position == end else { throw JSONSyntaxError(.unexpectedCharacter, at: position) }
        }

        // MARK: Entries

        @inline(__always)
        mutating func append(_ entry: Entry) {
            if entryCount == entryCapacity { grow() }
            (entries + entryCount).initialize(to: entry)
            entryCount += 1
        }

        mutating func grow() {
            let capacity = entryCapacity * 2
            let larger = UnsafeMutablePointer<Entry>.allocate(capacity: capacity)
            larger.moveInitialize(from: entries, count: entryCount)
            entries.deallocate()
            entries = larger
            entryCapacity = capacity
        }

        // MARK: Values

        @inline(__always)
        mutating func skipWhitespace() {
            while position < end {
                switch bytes[position] {
                case 0x20, 0x0A, 0x0D, 0x09:
                    position += 1
                    // Indentation, eight spaces at a time.
                    while end - position >= 8,
                        UnsafeRawPointer(bytes + position).loadUnaligned(as: UInt64.self) == 0x2020_2020_2020_2020
                    {
                        position += 8
                    }
                default: return
                }
            }
        }

        /// The next byte after whitespace, which must exist.
        @inline(__always)
        mutating func peekAfterWhitespace() throws(JSONSyntaxError) -> UInt8 {
            skipWhitespace()
            guard position < end else { throw JSONSyntaxError(.unexpectedEndOfFile, at: position) }
            return bytes[position]
        }

        mutating func scanValue(depth: Int) throws(JSONSyntaxError) {
            switch try peekAfterWhitespace() {
            case UInt8(ascii: "\""):
                try scanString()
            case UInt8(ascii: "{"):
                try scanObject(depth: depth)
            case UInt8(ascii: "["):
                try scanArray(depth: depth)
            case UInt8(ascii: "t"):
                try scanLiteral("true", kind: .true)
            case UInt8(ascii: "f"):
                try scanLiteral("false", kind: .false)
            case UInt8(ascii: "n"):
                try scanLiteral("null", kind: .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                scanNumber()
            default:
                throw JSONSyntaxError(.unexpectedCharacter, at: position)
            }
        }

        @inline(__always)
        mutating func scanLiteral(_ literal: StaticString, kind: Kind) throws(JSONSyntaxError) {
            let length = literal.utf8CodeUnitCount
            let expected = literal.utf8Start
            for offset in 0..<length {
                guard position + offset < end else {
                    throw JSONSyntaxError(.unexpectedEndOfFile, at: position + offset)
                }
                guard bytes[position + offset] == expected[offset] else {
                    throw JSONSyntaxError(.unexpectedCharacter, at: position + offset)
                }
            }
            position += length
            append(Entry(kind: kind, flags: 0, first: 0, second: 0))
        }

        /// Only delimits the number, as Foundation's scanner does: its grammar is checked on decoding.
        @inline(__always)
        mutating func scanNumber() {
            let start = position
            position += 1
            while position < end {
                switch bytes[position] {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "+"), UInt8(ascii: "-"),
                    UInt8(ascii: "e"), UInt8(ascii: "E"):
                    position += 1
                default:
                    append(Entry(kind: .number, flags: 0, first: UInt32(start), second: UInt32(position - start)))
                    return
                }
            }
            append(Entry(kind: .number, flags: 0, first: UInt32(start), second: UInt32(position - start)))
        }

        /// Finds the closing quote, eight bytes at a time while there is nothing to look at. Escapes
        /// are skipped (a `\u` needs four more bytes, none a quote) and control characters and
        /// non-ASCII bytes only noted: both are checked when the string is decoded.
        @inline(__always)
        mutating func scanString() throws(JSONSyntaxError) {
            position += 1  // the opening quote
            let start = position
            var flags: UInt8 = 0
            while true {
                while end - position >= 8 {
                    let word = UInt64(
                        littleEndian: UnsafeRawPointer(bytes + position).loadUnaligned(as: UInt64.self))
                    let special = Self.specialBytes(in: word)
                    if special == 0 {
                        position += 8
                    } else {
                        // The lowest flagged byte is exact: borrows only run upwards from a match.
                        position += special.trailingZeroBitCount >> 3
                        break
                    }
                }
                guard position < end else { throw JSONSyntaxError(.unexpectedEndOfFile, at: position) }
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    append(Entry(kind: .string, flags: flags, first: UInt32(start), second: UInt32(position - start)))
                    position += 1
                    return
                } else if byte == UInt8(ascii: "\\") {
                    flags |= StringFlags.backslash
                    try skipEscape()
                } else {
                    if byte < 0x20 {
                        flags |= StringFlags.controlCharacter
                    } else if byte >= 0x80 {
                        flags |= StringFlags.nonASCII
                    }
                    position += 1
                }
            }
        }

        /// High bit set in each byte that is a quote, a backslash, below 0x20 or above 0x7F.
        @inline(__always)
        static func specialBytes(in word: UInt64) -> UInt64 {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highBits: UInt64 = 0x8080_8080_8080_8080
            let quotes = word ^ (ones &* 0x22)
            let backslashes = word ^ (ones &* 0x5C)
            let hasQuote = (quotes &- ones) & ~quotes
            let hasBackslash = (backslashes &- ones) & ~backslashes
            let hasControl = (word &- ones &* 0x20) & ~word
            return (hasQuote | hasBackslash | hasControl | word) & highBits
        }

        mutating func skipEscape() throws(JSONSyntaxError) {
            position += 1  // the backslash
            guard position < end else { throw JSONSyntaxError(.unexpectedEndOfFile, at: position) }
            let escaped = bytes[position]
            position += 1
            guard escaped == UInt8(ascii: "u") else { return }
            guard end - position >= 4 else { throw JSONSyntaxError(.unexpectedEndOfFile, at: end) }
            for offset in 0..<4 where bytes[position + offset] == UInt8(ascii: "\"") {
                throw JSONSyntaxError(.invalidUnicodeEscape, at: position)
            }
            position += 4
        }

        mutating func scanArray(depth: Int) throws(JSONSyntaxError) {
            guard depth < Self.maximumDepth else { throw JSONSyntaxError(.tooDeeplyNested, at: position) }
            let entryIndex = entryCount
            append(Entry(kind: .array, flags: 0, first: 0, second: 0))
            position += 1  // [
            var count: UInt32 = 0
            if try peekAfterWhitespace() == UInt8(ascii: "]") {
                position += 1
            } else {
                elements: while true {
                    try scanValue(depth: depth + 1)
                    count += 1
                    switch try peekAfterWhitespace() {
                    case UInt8(ascii: "]"):
                        position += 1
                        break elements
                    case UInt8(ascii: ","):
                        position += 1
                        // Foundation accepts one trailing comma.
                        if try peekAfterWhitespace() == UInt8(ascii: "]") {
                            position += 1
                            break elements
                        }
                    default:
                        throw JSONSyntaxError(.unexpectedCharacter, at: position)
                    }
                }
            }
            entries[entryIndex].first = UInt32(entryCount)
            entries[entryIndex].second = count
        }

        mutating func scanObject(depth: Int) throws(JSONSyntaxError) {
            guard depth < Self.maximumDepth else { throw JSONSyntaxError(.tooDeeplyNested, at: position) }
            let entryIndex = entryCount
            append(Entry(kind: .object, flags: 0, first: 0, second: 0))
            position += 1  // {
            var count: UInt32 = 0
            if try peekAfterWhitespace() == UInt8(ascii: "}") {
                position += 1
            } else {
                members: while true {
                    guard try peekAfterWhitespace() == UInt8(ascii: "\"") else {
                        throw JSONSyntaxError(.unexpectedCharacter, at: position)
                    }
                    try scanString()
                    entries[entryIndex].flags |= entries[entryCount - 1].flags
                    guard try peekAfterWhitespace() == UInt8(ascii: ":") else {
                        throw JSONSyntaxError(.unexpectedCharacter, at: position)
                    }
                    position += 1
                    try scanValue(depth: depth + 1)
                    count += 1
                    switch try peekAfterWhitespace() {
                    case UInt8(ascii: "}"):
                        position += 1
                        break members
                    case UInt8(ascii: ","):
                        position += 1
                        // Foundation accepts one trailing comma.
                        if try peekAfterWhitespace() == UInt8(ascii: "}") {
                            position += 1
                            break members
                        }
                    default:
                        throw JSONSyntaxError(.unexpectedCharacter, at: position)
                    }
                }
            }
            entries[entryIndex].first = UInt32(entryCount)
            entries[entryIndex].second = count
        }
    }
}

// MARK: - Strings

extension JSONTape {
    /// The decoded string at `index`, which must be a string entry.
    func string(at index: Int) throws(JSONSyntaxError) -> String {
        let entry = entries[index]
        let raw = rawBytes(of: entry)
        if entry.flags == 0 {
            return String(decoding: raw, as: UTF8.self)  // ASCII without escapes: nothing to check
        }
        if entry.flags == StringFlags.nonASCII {
            guard let string = String(validating: raw, as: UTF8.self) else {
                throw JSONSyntaxError(.invalidUTF8, at: Int(entry.first))
            }
            return string
        }
        return try unescapedString(raw, at: Int(entry.first))
    }

    /// The entry of the value of the first member of `object` named `name`, or nil. Raw bytes are
    /// compared when both keys are ASCII without escapes, decoded strings otherwise: Foundation
    /// compares `String`s, so escaped and canonically equivalent spellings match too.
    func memberValue(in object: Int, named name: String) -> Int? {
        let end = Int(entries[object].first)
        if let found = name.utf8.withContiguousStorageIfAvailable({ memberValue(in: object, end: end, named: $0, name) }
        ) {
            return found
        }
        return Array(name.utf8).withUnsafeBufferPointer { memberValue(in: object, end: end, named: $0, name) }
    }

    private func memberValue(in object: Int, end: Int, named wanted: UnsafeBufferPointer<UInt8>, _ name: String)
        -> Int?
    {
        var wantedIsASCII = true
        for byte in wanted where byte >= 0x80 { wantedIsASCII = false }
        guard wantedIsASCII, let wantedBase = wanted.baseAddress, !wanted.isEmpty else {
            return memberValue(in: object, end: end, decodedName: name)
        }
        let count = UInt32(wanted.count)
        let first = wantedBase[0]
        let base = bytes
        var index = object + 1
        while index < end {
            let key = entries[index]
            if key.flags == 0 {
                if key.second == count {
                    let candidate = base + Int(key.first)
                    if candidate[0] == first && Self.equalBytes(candidate + 1, wantedBase + 1, count: wanted.count - 1)
                    {
                        return index + 1
                    }
                }
            } else if (try? string(at: index)) == name {
                // Keys are checked when their object is opened, so `string(at:)` does not fail here.
                return index + 1
            }
            index = next(after: index + 1)
        }
        return nil
    }

    /// The general case: every key decoded and compared as a `String`.
    private func memberValue(in object: Int, end: Int, decodedName name: String) -> Int? {
        var index = object + 1
        while index < end {
            if (try? string(at: index)) == name { return index + 1 }
            index = next(after: index + 1)
        }
        return nil
    }

    @inline(__always)
    private static func equalBytes(_ left: UnsafePointer<UInt8>, _ right: UnsafePointer<UInt8>, count: Int) -> Bool {
        var offset = 0
        while count - offset >= 8 {
            let leftWord = UnsafeRawPointer(left + offset).loadUnaligned(as: UInt64.self)
            guard leftWord == UnsafeRawPointer(right + offset).loadUnaligned(as: UInt64.self) else { return false }
            offset += 8
        }
        while offset < count {
            guard left[offset] == right[offset] else { return false }
            offset += 1
        }
        return true
    }

    /// The slow path: escapes, and the errors Foundation reports for control characters, unknown
    /// escapes, bad `\u` sequences, unpaired surrogates and invalid UTF-8.
    private func unescapedString(_ raw: UnsafeBufferPointer<UInt8>, at offset: Int) throws(JSONSyntaxError)
        -> String
    {
        var output: [UInt8] = []
        output.reserveCapacity(raw.count)
        var index = 0
        while index < raw.count {
            let byte = raw[index]
            if byte == UInt8(ascii: "\\") {
                index += 1
                guard index < raw.count else { throw JSONSyntaxError(.invalidEscape, at: offset + index) }
                let escaped = raw[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escaped)
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "u"):
                    let scalar = try unicodeEscape(raw, index: &index, offset: offset)
                    output.append(contentsOf: UTF8.encode(scalar)!)
                default:
                    throw JSONSyntaxError(.invalidEscape, at: offset + index - 1)
                }
            } else {
                guard byte >= 0x20 else { throw JSONSyntaxError(.controlCharacterInString, at: offset + index) }
                output.append(byte)
                index += 1
            }
        }
        guard let string = String(validating: output, as: UTF8.self) else {
            throw JSONSyntaxError(.invalidUTF8, at: offset)
        }
        return string
    }

    /// The scalar of a `\uXXXX` escape whose `u` is just before `index`, with its low surrogate if it
    /// is a high one. Lone surrogates are errors, as in Foundation.
    private func unicodeEscape(_ raw: UnsafeBufferPointer<UInt8>, index: inout Int, offset: Int)
        throws(JSONSyntaxError) -> Unicode.Scalar
    {
        let unit = try hexUnit(raw, at: index, offset: offset)
        index += 4
        if UTF16.isLeadSurrogate(unit) {
            guard raw.count - index >= 2, raw[index] == UInt8(ascii: "\\"), raw[index + 1] == UInt8(ascii: "u")
            else { throw JSONSyntaxError(.invalidUnicodeEscape, at: offset + index) }
            let trail = try hexUnit(raw, at: index + 2, offset: offset)
            guard UTF16.isTrailSurrogate(trail) else {
                throw JSONSyntaxError(.invalidUnicodeEscape, at: offset + index)
            }
            index += 6
            return UTF16.decode(UTF16.EncodedScalar([unit, trail]))
        }
        guard let scalar = Unicode.Scalar(unit) else {
            throw JSONSyntaxError(.invalidUnicodeEscape, at: offset + index - 4)
        }
        return scalar
    }

    private func hexUnit(_ raw: UnsafeBufferPointer<UInt8>, at index: Int, offset: Int) throws(JSONSyntaxError)
        -> UInt16
    {
        guard raw.count - index >= 4 else { throw JSONSyntaxError(.invalidUnicodeEscape, at: offset + index) }
        var value: UInt16 = 0
        for position in index..<index + 4 {
            let byte = raw[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONSyntaxError(.invalidUnicodeEscape, at: offset + position)
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }
}

// MARK: - Numbers

extension JSONTape {
    /// The number at `index` (a number entry) as an integer of type `T`, with Foundation's rules:
    /// integral values in range are accepted however written (`1.0`, `1e3`, `-0`), anything else
    /// fails as invalid JSON.
    func integer<T: FixedWidthInteger>(at index: Int, as type: T.Type) throws(JSONSyntaxError) -> T {
        let entry = entries[index]
        let raw = rawBytes(of: entry)
        let offset = Int(entry.first)
        try Self.prevalidateNumber(raw, offset: offset)
        if let (magnitude, isNegative) = Self.parseIntegerDigits(raw) {
            if !isNegative, let value = T(exactly: magnitude) { return value }
            if isNegative, magnitude == 0 { return 0 }
            if isNegative, T.isSigned, magnitude - 1 <= UInt64(T.max) { return T(truncatingIfNeeded: 0 &- magnitude) }
        }
        // Slow path, as Foundation: through Double, exact below 2^53; above, the digits themselves.
        guard let double = Double(Self.text(of: raw)), let value = T(exactly: double) else {
            throw JSONSyntaxError(.numberOutOfRange, at: offset)
        }
        if double.magnitude < 0x1p53 { return value }
        guard let exact: T = Self.decimalInteger(raw) else { throw JSONSyntaxError(.numberOutOfRange, at: offset) }
        return exact
    }

    /// `integer(at:as: Int.self)` without generics, for the common case.
    func int(at index: Int) throws(JSONSyntaxError) -> Int {
        let entry = entries[index]
        let raw = rawBytes(of: entry)
        try Self.prevalidateNumber(raw, offset: Int(entry.first))
        if let (magnitude, isNegative) = Self.parseIntegerDigits(raw) {
            if !isNegative, magnitude <= UInt64(Int.max) { return Int(magnitude) }
            if isNegative, magnitude <= UInt64(Int.max) + 1 { return Int(truncatingIfNeeded: 0 &- magnitude) }
        }
        return try integer(at: index, as: Int.self)
    }

    /// The number at `index` (a number entry) as a `Double` or `Float`: rejected like Foundation if
    /// it overflows to infinity or underflows to zero.
    func floatingPoint<T: BinaryFloatingPoint & LosslessStringConvertible>(at index: Int, as type: T.Type)
        throws(JSONSyntaxError) -> T
    {
        let entry = entries[index]
        let raw = rawBytes(of: entry)
        let offset = Int(entry.first)
        try Self.prevalidateNumber(raw, offset: offset)
        guard let value = T(Self.text(of: raw)) else { throw JSONSyntaxError(.invalidNumber, at: offset) }
        guard value.isFinite, value != 0 || Self.isTrueZero(raw) else {
            throw JSONSyntaxError(.numberOutOfRange, at: offset)
        }
        return value
    }

    private static func text(of raw: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: raw, as: UTF8.self)
    }

    /// Foundation's pre-check: no leading zero, a digit after `-`, a digit before the first
    /// exponent, and a digit at the end. What it lets through is left to the number parsers.
    private static func prevalidateNumber(_ raw: UnsafeBufferPointer<UInt8>, offset: Int) throws(JSONSyntaxError) {
        let count = raw.count
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        func checkAfterLeadingZero(_ index: Int) throws(JSONSyntaxError) {
            guard index < count else { return }
            switch raw[index] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return
            default: throw JSONSyntaxError(.invalidNumber, at: offset + index)
            }
        }
        let firstDigit: Int
        switch raw[0] {
        case UInt8(ascii: "0"):
            try checkAfterLeadingZero(1)
            firstDigit = 0
        case UInt8(ascii: "-"):
            guard count > 1 else { throw JSONSyntaxError(.invalidNumber, at: offset) }
            switch raw[1] {
            case UInt8(ascii: "0"): try checkAfterLeadingZero(2)
            case UInt8(ascii: "1")...UInt8(ascii: "9"): break
            default: throw JSONSyntaxError(.invalidNumber, at: offset + 1)
            }
            firstDigit = 1
        default:
            firstDigit = 0
        }
        var index = firstDigit + 1
        while index < count {
            let byte = raw[index]
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                guard isDigit(raw[index - 1]) else { throw JSONSyntaxError(.invalidNumber, at: offset + index) }
                break
            }
            index += 1
        }
        guard isDigit(raw[count - 1]) else { throw JSONSyntaxError(.invalidNumber, at: offset + count - 1) }
    }

    /// An optional `-` and decimal digits only, as a magnitude that fits in 64 bits; nil otherwise.
    private static func parseIntegerDigits(_ raw: UnsafeBufferPointer<UInt8>) -> (UInt64, isNegative: Bool)? {
        var index = 0
        let isNegative = raw[0] == UInt8(ascii: "-")
        if isNegative { index = 1 }
        guard index < raw.count else { return nil }
        var magnitude: UInt64 = 0
        while index < raw.count {
            let digit = raw[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            let (next, carry) = shifted.addingReportingOverflow(UInt64(digit))
            guard !overflow, !carry else { return nil }
            magnitude = next
            index += 1
        }
        return (magnitude, isNegative)
    }

    /// Foundation's `Decimal` fallback for integral values of 2^53 and more written with a fraction
    /// or an exponent: significant digits (trailing zeros dropped) must fit in 64 bits, and a
    /// remaining fraction is truncated, as `FixedWidthInteger(Decimal)` does.
    private static func decimalInteger<T: FixedWidthInteger>(_ raw: UnsafeBufferPointer<UInt8>) -> T? {
        var index = 0
        let isNegative = raw[0] == UInt8(ascii: "-")
        if isNegative { index = 1 }
        var digits: [UInt8] = []
        var exponent = 0
        var inFraction = false
        while index < raw.count {
            let byte = raw[index]
            if byte == UInt8(ascii: ".") {
                inFraction = true
            } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                guard let written = Int(text(of: UnsafeBufferPointer(rebasing: raw[(index + 1)...]))) else {
                    return nil
                }
                exponent += written
                break
            } else {
                if !(digits.isEmpty && byte == UInt8(ascii: "0")) { digits.append(byte - UInt8(ascii: "0")) }
                if inFraction { exponent -= 1 }
            }
            index += 1
        }
        while digits.last == 0 {
            digits.removeLast()
            exponent += 1
        }
        var magnitude: UInt64 = 0
        for digit in digits {
            let (shifted, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            let (next, carry) = shifted.addingReportingOverflow(UInt64(digit))
            guard !overflow, !carry else { return nil }
            magnitude = next
        }
        if exponent < 0 {
            for _ in 0..<(-exponent) { magnitude /= 10 }
        } else {
            for _ in 0..<exponent {
                let (next, overflow) = magnitude.multipliedReportingOverflow(by: 10)
                guard !overflow else { return nil }
                magnitude = next
            }
        }
        if isNegative {
            guard T.isSigned, !digits.isEmpty, let value = T(exactly: magnitude) else { return nil }
            return 0 - value
        }
        return T(exactly: magnitude)
    }

    /// Whether a number the parser rounded to zero really is zero. Ported as is from Foundation,
    /// including its order of checks for the last `count % 4` bytes, which makes `0e5` fail.
    private static func isTrueZero(_ raw: UnsafeBufferPointer<UInt8>) -> Bool {
        func check(_ index: Int) -> Bool? {
            switch raw[index] {
            case UInt8(ascii: "1")...UInt8(ascii: "9"): return false
            case UInt8(ascii: "e"), UInt8(ascii: "E"): return true
            default: return nil
            }
        }
        var start = 0
        while raw.count - start >= 4 {
            for index in start..<start + 4 {
                if let result = check(index) { return result }
            }
            start += 4
        }
        for index in (start..<raw.count).reversed() {
            if let result = check(index) { return result }
        }
        return true
    }
}
