/// The configuration keys a parse read, as dotted paths (`pushward.url`, list entries as
/// `alerts.rules[].when`).
///
/// The parser rejects every key it did not read, so the keys it reads from a document that has
/// every section are exactly the keys it accepts. That is the list `docs/configuration.md` is
/// checked against: taken from the parser itself, never kept by hand beside it.
public final class ConfigurationKeyLog {
    public private(set) var keys: Set<String> = []

    public init() {}

    /// Notes one key path; list indexes (`rules[0]`) become `[]`, so every entry names the same key.
    func note(_ path: String) {
        var normalized = ""
        var inIndex = false
        for character in path {
            if character == "[" {
                inIndex = true
                normalized.append("[]")
            } else if character == "]" {
                inIndex = false
            } else if !inIndex {
                normalized.append(character)
            }
        }
        keys.insert(normalized)
    }
}
