import BridgeCore

/// What retention removed, kept so maintainers can be told plainly that a run's details are gone
/// rather than that it never existed: for runs, per repository, the highest run id removed; for
/// the other tables, the latest cutoff applied. Bounded by the number of repositories.
public struct RetentionMark: Sendable, Equatable {
    /// The table (`deliveries`, `runs`, `activities`, `step_history`).
    public var table: String
    /// For runs: the repository whose runs were removed; nil for the other tables.
    public var repository: String?
    /// For runs: the highest run id of `repository` removed so far.
    public var throughRunID: Int?
    /// Rows older than this (received, last updated or finished) were removed.
    public var before: UnixTime
    /// The retention, in seconds, that set `before`.
    public var retention: Int

    public init(table: String, repository: String? = nil, throughRunID: Int? = nil, before: UnixTime, retention: Int) {
        self.table = table
        self.repository = repository
        self.throughRunID = throughRunID
        self.before = before
        self.retention = retention
    }

    /// The configuration key that sets this retention (`retention.runs`, ...).
    public var key: String { "retention." + table }
}
