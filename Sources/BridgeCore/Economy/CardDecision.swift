/// How a run was drawn: the level the budget allowed it, or why it got no card, with the figures
/// behind the choice, so maintainers can see what each run cost and why (`runs show`, the API).
public struct CardDecision: Sendable, Equatable, Codable {
    /// The level chosen; nil: the run gets no card (the budget could not pay for even `milestones`).
    public var level: Fidelity?
    /// In words, with the figures: what fits, what was forecast.
    public var reason: String
    public var decidedAt: UnixTime
    /// Updates left this period after the reserve for runs already on a card; nil when unlimited.
    public var remaining: Int?
    /// Runs expected to want a card before the reset.
    public var forecastRuns: Double?

    public init(level: Fidelity?, reason: String, decidedAt: UnixTime, remaining: Int?, forecastRuns: Double?) {
        self.level = level
        self.reason = reason
        self.decidedAt = decidedAt
        self.remaining = remaining
        self.forecastRuns = forecastRuns
    }
}
