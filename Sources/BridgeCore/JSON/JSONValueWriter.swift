/// Writes a `JSONValue` into a `JSONByteBuffer`, compact or indented, without recursion: the
/// containers being written are a stack of its own, so a deep value costs heap, not call frames.
///
/// Recursion was bounded by `JSONValue.maximumDepth` alone, and 512 frames of a debug build's
/// writer did not fit the 512 KB stack of a secondary thread; now the depth only decides what is
/// written (a container past it is `null`), never whether the writing thread survives.
struct JSONValueWriter {
    /// A container being written, with the index of its next element or member. A struct with
    /// both lists (one of them empty) rather than an enum, so that moving on is an increment in
    /// place, not a new case holding the same arrays.
    private struct OpenContainer {
        var elements: [JSONValue] = []
        var members: [(key: String, value: JSONValue)] = []
        var isObject = false
        var next = 0
    }

    /// One level of indentation (with a newline before each element and `": "` after each key),
    /// or nil for compact output.
    let indent: [UInt8]?
    /// The arrays and objects already open around the value written, in the document it goes into.
    let depth: Int

    init(indent: Int? = nil, depth: Int = 0) {
        self.indent = indent.map { [UInt8](repeating: UInt8(ascii: " "), count: max(0, $0)) }
        self.depth = depth
    }

    func write(_ root: JSONValue, to output: inout JSONByteBuffer) {
        var open: [OpenContainer] = []
        var value = root
        while true {
            switch value {
            case .array where depth + open.count >= JSONValue.maximumDepth,
                .object where depth + open.count >= JSONValue.maximumDepth:
                output.appendASCII("null")
            case .array(let elements) where !elements.isEmpty:
                output.append(UInt8(ascii: "["))
                open.append(OpenContainer(elements: elements))
            case .object(let members) where !members.isEmpty:
                output.append(UInt8(ascii: "{"))
                open.append(OpenContainer(members: members.sorted { $0.key < $1.key }, isObject: true))
            case .array: output.appendASCII("[]")
            case .object: output.appendASCII("{}")
            default: Self.writeScalar(value, to: &output)
            }
            // The next value to write: the innermost open container's next element, once those
            // that are finished are closed; none left means the root is written.
            while let last = open.indices.last {
                let next = open[last].next
                if open[last].isObject, next < open[last].members.count {
                    open[last].next += 1
                    startElement(next, level: open.count, to: &output)
                    output.appendString(open[last].members[next].key)
                    output.append(JSONByteBuffer.colon)
                    if indent != nil { output.append(UInt8(ascii: " ")) }
                    value = open[last].members[next].value
                    break
                } else if !open[last].isObject, next < open[last].elements.count {
                    open[last].next += 1
                    startElement(next, level: open.count, to: &output)
                    value = open[last].elements[next]
                    break
                }
                let isObject = open.removeLast().isObject
                newline(level: open.count, to: &output)
                output.append(isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
            }
            if open.isEmpty { return }
        }
    }

    /// The comma before every element but the first, then its line when indented.
    private func startElement(_ index: Int, level: Int, to output: inout JSONByteBuffer) {
        if index > 0 { output.append(JSONByteBuffer.comma) }
        newline(level: level, to: &output)
    }

    private func newline(level: Int, to output: inout JSONByteBuffer) {
        guard let indent else { return }
        output.append(UInt8(ascii: "\n"))
        for _ in 0..<level {
            for byte in indent { output.append(byte) }
        }
    }

    private static func writeScalar(_ value: JSONValue, to output: inout JSONByteBuffer) {
        switch value {
        case .bool(let flag): output.appendASCII(flag ? "true" : "false")
        case .number(let number):
            if let integer = value.intValue {
                output.appendInteger(integer)
            } else if number.isFinite {
                output.appendRaw(number.description)
            } else {
                // JSON has no NaN or infinity; the validator rejects any content that would carry one.
                output.appendASCII("null")
            }
        case .string(let text): output.appendString(text)
        case .null, .array, .object: output.appendASCII("null")
        }
    }
}
