/// How long the database keeps what it no longer needs to draw cards (the `retention` section).
/// Durations are in seconds. Raw payloads keep their own, shorter `github.payload_retention`.
///
/// Each table is pruned on its own clock because each answers a different question: deliveries
/// say why a card moved (or did not), runs with their jobs and pushes are what `runs show` and
/// the status page read, ended cards are only kept to be looked at, and step history feeds the
/// estimates of later runs. Nothing here touches a run still in flight or the history its
/// estimates need.
public struct RetentionSettings: Sendable, Equatable {
    /// Delivery rows (`retention.deliveries`), by the time they were received. 30 days: a
    /// month of "why was this delivery ignored" and of run timelines, at a few hundred bytes a
    /// row once the payload is gone. Never shorter than `github.payload_retention`: a payload
    /// lives in its delivery's row and would go with it.
    public var deliveries: Int = 30 * 86_400
    /// Finished runs with their jobs and PushWard requests (`retention.runs`), by their last
    /// update. 45 days: the status page's month chart counts the budget period's requests (a
    /// period is at most 31 days) and the budget planner's forecast reads 14 days of runs, so
    /// anything below `minimumRuns` would change what they show; two more weeks leave room to
    /// look back at last month's runs. A run not released yet (in flight) is never pruned.
    public var runs: Int = 45 * 86_400
    /// Ended cards (`retention.activities`), by their last update. 30 days: an ended card is
    /// only read by `runs show` and `explain`; a repository that runs again gets a fresh card.
    public var activities: Int = 30 * 86_400
    /// Step history (`retention.step_history`), by when the run finished, beyond the last
    /// `stepHistoryKeptPerBranch` finished runs of every repository + workflow + branch, which
    /// are kept whatever their age so a quiet branch's estimates survive a quiet month. 30 days:
    /// estimates read the last few runs only, so an older run outside those 20 adds nothing.
    public var stepHistory: Int = 30 * 86_400

    /// Finished runs of each repository + workflow + branch whose step history is kept whatever
    /// its age: as many as seeds and estimates read per workflow (`RunHistory.runsKeptPerWorkflow`,
    /// 20). Keeping that many per branch keeps at least that many per workflow too.
    public static let stepHistoryKeptPerBranch = RunHistory.runsKeptPerWorkflow

    /// The shortest `retention.runs`: the budget period the month chart counts (31 days) plus a
    /// day, which also covers the 14 days of arrivals the forecast reads and the week of finished
    /// runs a restart restores for re-runs.
    public static let minimumRuns = 32 * 86_400
    /// The shortest of the other retentions: a day, so a typo such as `"30m"` for `"30d"` is an
    /// error rather than a database emptied every ten minutes.
    public static let minimumOther = 86_400
    /// The longest any retention may be: ten years, which is "keep it" in practice.
    public static let maximum = 3_650 * 86_400

    public init() {}
}
