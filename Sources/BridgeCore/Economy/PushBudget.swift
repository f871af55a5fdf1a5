/// Where the month's Live Activity updates stand, as the planner sees them: a core input, like
/// time, given by the daemon from `GET /auth/me` (or from `pushward.budget`), by `render` from
/// `--budget`/`--used`.
public struct PushBudget: Sendable, Equatable, Codable {
    /// Updates PushWard counted this period.
    public var used: Int
    /// The period's allowance; nil: unlimited (the planner then stays out of the way).
    public var limit: Int?
    /// When the count starts over; nil: unknown (the planner then assumes the end of a 30-day period).
    public var resetsAt: UnixTime?

    public init(used: Int, limit: Int?, resetsAt: UnixTime?) {
        self.used = used
        self.limit = limit
        self.resetsAt = resetsAt
    }
}
