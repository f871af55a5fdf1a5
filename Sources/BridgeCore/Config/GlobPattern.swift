/// A filter pattern where `*` matches any run of characters (including `/`) and everything else
/// matches itself, case-sensitively: `my-org/*`, `release/*`, `*`.
public struct GlobPattern: Sendable, Hashable, CustomStringConvertible {
    public let pattern: String

    public init(_ pattern: String) {
        self.pattern = pattern
    }

    public var description: String { pattern }

    /// Whether `value` matches one of `patterns`, as every rule with glob lists reads them (alerts,
    /// actions, widgets): an empty list matches everything, and a value the payloads did not carry
    /// matches only a list that holds `*`.
    public static func any(_ patterns: [GlobPattern], match value: String?) -> Bool {
        guard !patterns.isEmpty else { return true }
        guard let value else { return patterns.contains { $0.pattern == "*" } }
        return patterns.contains { $0.matches(value) }
    }

    public func matches(_ text: String) -> Bool {
        let pieces = pattern.split(separator: "*", omittingEmptySubsequences: false).map(String.init)
        guard pieces.count > 1 else { return text == pattern }
        var remainder = Substring(text)
        guard remainder.hasPrefix(pieces[0]) else { return false }
        remainder = remainder.dropFirst(pieces[0].count)
        for middle in pieces.dropFirst().dropLast() where !middle.isEmpty {
            guard let found = remainder.firstRange(of: middle) else { return false }
            remainder = remainder[found.upperBound...]
        }
        let last = pieces[pieces.count - 1]
        return remainder.count >= last.count && remainder.hasSuffix(last)
    }
}
