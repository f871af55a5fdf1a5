extension JSONValue {
    /// The value as JSON for a person to read: members sorted by key as in `canonicalString`, one
    /// a line, indented by `indent` spaces a level; empty arrays and objects stay `[]` and `{}`.
    /// Strings and numbers are written exactly as `canonicalString` writes them, and a container
    /// deeper than `maximumDepth` is `null` as there.
    public func indentedString(indent: Int = 2) -> String {
        var output = JSONByteBuffer(capacity: 512)
        JSONValueWriter(indent: indent).write(self, to: &output)
        return output.string
    }
}
