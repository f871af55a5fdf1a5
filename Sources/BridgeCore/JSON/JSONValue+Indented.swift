extension JSONValue {
    /// The value as JSON for a person to read: members sorted by key as in `canonicalString`, one
    /// a line, indented by `indent` spaces a level; empty arrays and objects stay `[]` and `{}`.
    /// Strings and numbers are written exactly as `canonicalString` writes them.
    public func indentedString(indent: Int = 2) -> String {
        var output = ""
        writeIndented(to: &output, depth: 0, indent: String(repeating: " ", count: indent))
        return output
    }

    private func writeIndented(to output: inout String, depth: Int, indent: String) {
        let inner = String(repeating: indent, count: depth + 1)
        let closing = String(repeating: indent, count: depth)
        switch self {
        case .array(let elements) where !elements.isEmpty:
            output += "[\n"
            for (index, element) in elements.enumerated() {
                output += inner
                element.writeIndented(to: &output, depth: depth + 1, indent: indent)
                output += index == elements.count - 1 ? "\n" : ",\n"
            }
            output += closing + "]"
        case .object(let members) where !members.isEmpty:
            output += "{\n"
            let sorted = members.sorted { $0.key < $1.key }
            for (index, member) in sorted.enumerated() {
                output += inner + JSONValue.string(member.key).canonicalString + ": "
                member.value.writeIndented(to: &output, depth: depth + 1, indent: indent)
                output += index == sorted.count - 1 ? "\n" : ",\n"
            }
            output += closing + "}"
        default:
            output += canonicalString
        }
    }
}
