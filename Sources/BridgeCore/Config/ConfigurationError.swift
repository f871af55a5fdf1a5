/// A configuration problem, naming the key, so `check-config` and `serve` can say exactly what to fix.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The dotted key (`pushward.ended_ttl`), or the file when the whole document is wrong.
    public var key: String
    public var problem: String

    public init(key: String, problem: String) {
        self.key = key
        self.problem = problem
    }

    public var description: String { "\(key): \(problem)" }
}
