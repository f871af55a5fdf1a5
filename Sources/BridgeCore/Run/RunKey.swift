/// One attempt of one workflow run: the unit the bridge tracks and draws.
///
/// A re-run keeps the run id and raises the attempt, so each attempt is a run of its own here,
/// with its own first frame (a re-run must not inherit the previous attempt's progress).
public struct RunKey: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// `owner/name`.
    public var repository: String
    public var runID: Int
    public var attempt: Int

    public init(repository: String, runID: Int, attempt: Int) {
        self.repository = repository
        self.runID = runID
        self.attempt = attempt
    }

    public static func < (lhs: RunKey, rhs: RunKey) -> Bool {
        (lhs.repository, lhs.runID, lhs.attempt) < (rhs.repository, rhs.runID, rhs.attempt)
    }

    public var description: String { "\(repository)#\(runID)/\(attempt)" }
}
