/// Reads the status page's bytes the way a browser's tokeniser would and reports every place
/// where payload text could have become markup: a tag outside the page's own vocabulary (a
/// `<script>`, an `<img>`), an attribute that does not close where it should (a quote that got
/// out), an event handler, a link to anything but http(s) or the page's own paths, a raw
/// control or bidi character, an `&` that starts no entity.
///
/// Works on UTF-8 bytes, not `Character`s: a quote followed by a combining mark is one
/// `Character`, but a browser sees the quote byte, and so must the test.
struct MarkupScanner {
    /// Every element the page draws (HTML, and the cards' SVG).
    static let tags: Set<String> = [
        "html", "head", "meta", "title", "style", "body", "header", "div", "span", "main", "section", "h2", "h3", "p",
        "code", "article", "dl", "dt", "dd", "a", "details", "summary", "table", "thead", "tbody", "tr", "th", "td",
        "footer", "strong", "svg", "defs", "pattern", "rect", "g", "path", "circle", "text", "line",
    ]
    /// Attributes that load or run something; the page has none of them.
    static let forbiddenAttributes: Set<String> = ["src", "srcdoc", "xlink:href", "action", "formaction", "srcset"]
    /// The entities the escaping writes.
    static let entities = ["amp;", "lt;", "gt;", "quot;", "#39;"]

    let bytes: [UInt8]
    /// A browser's serialisation of the DOM (`--dump-dom`) rather than the page as sent: browsers
    /// write `>` (and some `<`) raw inside attribute values and `&nbsp;` for U+00A0, which is
    /// well-formed there.
    let serialized: Bool
    private(set) var problems: [String] = []
    /// Every `href` value, for tests that look at the links themselves.
    private(set) var links: [String] = []

    init(_ text: String, serialized: Bool = false) {
        bytes = Array(text.utf8)
        self.serialized = serialized
        scan()
    }

    static func isInvisibleControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D: false
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    private mutating func scan() {
        // Raw controls and bidi characters anywhere: they reorder or hide what an operator reads.
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars where Self.isInvisibleControl(scalar) {
            problems.append("raw U+\(String(scalar.value, radix: 16, uppercase: true))")
        }
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "<"):
                index = tag(at: index)
            case UInt8(ascii: ">"):
                problems.append("a raw > in text at \(snippet(index))")
                index += 1
            case UInt8(ascii: "&"):
                entity(at: index)
                index += 1
            default:
                index += 1
            }
        }
    }

    private func has(_ text: String, at index: Int) -> Bool {
        let expected = Array(text.utf8)
        return index + expected.count <= bytes.count && Array(bytes[index..<index + expected.count]) == expected
    }

    private func snippet(_ index: Int) -> String {
        let from = max(0, index - 40)
        let to = min(bytes.count, index + 60)
        return String(decoding: bytes[from..<to], as: UTF8.self).debugDescription
    }

    private mutating func entity(at index: Int) {
        let entities = serialized ? Self.entities + ["nbsp;"] : Self.entities
        if !entities.contains(where: { has($0, at: index + 1) }) {
            problems.append("an & that starts no entity at \(snippet(index))")
        }
    }

    /// Tag and attribute names: SVG's are in camel case (`viewBox`).
    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ":")
    }

    /// Reads one tag from its `<`; returns the index after it.
    private mutating func tag(at start: Int) -> Int {
        if has("<!doctype html>", at: start) || has("<!DOCTYPE html>", at: start) { return start + 15 }
        var index = start + 1
        let closing = index < bytes.count && bytes[index] == UInt8(ascii: "/")
        if closing { index += 1 }
        let nameStart = index
        while index < bytes.count, Self.isNameByte(bytes[index]) { index += 1 }
        let name = String(decoding: bytes[nameStart..<index], as: UTF8.self)
        guard Self.tags.contains(name) else {
            problems.append("a <\(closing ? "/" : "")\(name)> tag the page never draws at \(snippet(start))")
            return index
        }
        if closing {
            guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else {
                problems.append("a malformed </\(name)> at \(snippet(start))")
                return index
            }
            return index + 1
        }
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: ">") { index += 1; break }
            if has("/>", at: index) { index += 2; break }
            guard bytes[index] == UInt8(ascii: " ") else {
                problems.append("<\(name)> goes on with no space before an attribute at \(snippet(index))")
                return index
            }
            index += 1
            let attributeStart = index
            while index < bytes.count, Self.isNameByte(bytes[index]) { index += 1 }
            let attribute = String(decoding: bytes[attributeStart..<index], as: UTF8.self).lowercased()
            guard !attribute.isEmpty else {
                problems.append("<\(name)> has an attribute without a name at \(snippet(index))")
                return index
            }
            if attribute.hasPrefix("on") || Self.forbiddenAttributes.contains(attribute) {
                problems.append("<\(name)> has a \(attribute) attribute at \(snippet(attributeStart))")
            }
            // A boolean attribute (`open`).
            guard has("=\"", at: index) else { continue }
            index += 2
            let valueStart = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                if !serialized, bytes[index] == UInt8(ascii: "<") || bytes[index] == UInt8(ascii: ">") {
                    problems.append("a raw < or > in <\(name) \(attribute)> at \(snippet(index))")
                }
                if bytes[index] == UInt8(ascii: "&") { entity(at: index) }
                index += 1
            }
            let value = String(decoding: bytes[valueStart..<min(index, bytes.count)], as: UTF8.self)
            index += 1
            if attribute == "href" {
                links.append(value)
                let lowered = value.lowercased()
                let allowed =
                    lowered.hasPrefix("https://") || lowered.hasPrefix("http://")
                    || (lowered.hasPrefix("/") && !lowered.hasPrefix("//")) || lowered.hasPrefix("#")
                if !allowed { problems.append("<\(name)> links to \(value.debugDescription)") }
            }
        }
        if name == "style" {
            // Raw text up to the end tag, as a browser reads it.
            while index < bytes.count, !has("</style>", at: index) { index += 1 }
        }
        return index
    }
}
