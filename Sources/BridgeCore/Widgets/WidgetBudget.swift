/// Where the month's widget updates stand (`GET /auth/me`'s `widget_updates_used`/`_limit`,
/// counted on between reads), and the planner's rule for spending them.
///
/// The budget planner of the cards with widgets' own quota kind: a run's start and its end are
/// what a widget is for, so they go while any update is left; the updates between them (a moved
/// estimate) go only while more than half of the month's allowance is left, so a busy month spends
/// its last updates on results. A `429 quota.exceeded` of kind `widget_updates` pauses widgets
/// (not cards) until the reset.
public struct WidgetBudget: Sendable, Equatable {
    public var used: Int?
    /// Nil: unlimited or not known.
    public var limit: Int?
    /// PushWard said the widget updates are spent: nothing is sent before this.
    public var pausedUntil: UnixTime?

    public init(used: Int? = nil, limit: Int? = nil, pausedUntil: UnixTime? = nil) {
        self.used = used
        self.limit = limit
        self.pausedUntil = pausedUntil
    }

    /// Whether any widget request may go at `now`.
    public func allowsAny(at now: UnixTime) -> Bool {
        if let pausedUntil, now < pausedUntil { return false }
        guard let limit, let used else { return true }
        return used < limit
    }

    /// Whether an update between a start and an end (a moved estimate) may go.
    public func allowsEstimates(at now: UnixTime) -> Bool {
        guard allowsAny(at: now) else { return false }
        guard let limit, let used else { return true }
        return limit - used > limit / 2
    }

    /// One more update PushWard acknowledged.
    public mutating func spend() {
        if let used { self.used = used + 1 }
    }
}
