/// A recorded webhook payload with `@NAME@` placeholders (written by `bench/gen.py
/// --scale-templates`), split once so that filling it in is a few appends: a million runs are
/// three million bodies, and searching a 16 KB text for each placeholder every time would cost
/// more than ingesting it.
struct PayloadTemplate {
    private enum Part {
        case text([UInt8])
        case field(String)
    }

    private let parts: [Part]
    /// The template's length, a good first guess at a filled body's.
    private let size: Int

    /// Splits `text` at each `@NAME@` (upper-case letters and digits between two `@`); any other
    /// `@` (an e-mail address, `actions/checkout@v3`) stays text.
    init(_ text: String) {
        let bytes = Array(text.utf8)
        var parts: [Part] = []
        var literal: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "@"), let end = Self.placeholderEnd(bytes, from: index) {
                if !literal.isEmpty { parts.append(.text(literal)) }
                literal = []
                parts.append(.field(String(decoding: bytes[(index + 1)..<end], as: UTF8.self)))
                index = end + 1
            } else {
                literal.append(bytes[index])
                index += 1
            }
        }
        if !literal.isEmpty { parts.append(.text(literal)) }
        self.parts = parts
        size = bytes.count
    }

    /// The closing `@` of a placeholder starting at `start`, or nil when this `@` starts none.
    private static func placeholderEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start + 1
        while index < bytes.count, index - start <= 16 {
            let byte = bytes[index]
            if byte == UInt8(ascii: "@") { return index > start + 1 ? index : nil }
            guard
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            else { return nil }
            index += 1
        }
        return nil
    }

    /// The placeholders this template uses.
    var fields: Set<String> {
        Set(
            parts.compactMap {
                if case .field(let name) = $0 { return name }
                return nil
            })
    }

    /// The body with every placeholder replaced by `values[name]` (a missing value traps: the
    /// caller checks `fields` once at start).
    func fill(_ values: [String: String]) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(size + 64)
        for part in parts {
            switch part {
            case .text(let bytes): body.append(contentsOf: bytes)
            case .field(let name): body.append(contentsOf: values[name]!.utf8)
            }
        }
        return body
    }
}
