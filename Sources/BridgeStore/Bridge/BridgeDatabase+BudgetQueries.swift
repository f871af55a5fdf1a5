import BridgeCore
import Foundation

/// Reads behind the status page's month chart: what the period's pushes cost, day by day, and
/// when the budget planner changed its mind. Both read a bounded number of rows (a row per day, an
/// index on time), since the pushes table keeps every request ever sent and the page is read
/// every few seconds.
extension BridgeDatabase {
    /// Requests PushWard acknowledged (a 2xx status: each one counted against the monthly budget)
    /// per UTC day from `since`, as (start of the day, count), oldest first; days without one are
    /// left out. Dry-run and failed requests cost nothing and are not counted.
    ///
    /// Whole days come from `pushes_per_day`, which a trigger keeps as requests are recorded, so
    /// the page reads a row per day rather than every request of the month; only the day `since`
    /// falls in is counted from `pushes` (through `pushes_by_time`), from `since` on.
    public func acknowledgedPushesPerDay(since: UnixTime) throws -> [(day: UnixTime, count: Int)] {
        let first = (since / 86_400).rounded(.down)
        let partial =
            try connection.queryOne(
                """
                SELECT COUNT(*) FROM pushes
                WHERE sent_at >= ? AND sent_at < ? AND status BETWEEN 200 AND 299
                """,
                [.real(since), .real((first + 1) * 86_400)]
            ) { $0.int(0) ?? 0 } ?? 0
        let whole = try connection.query(
            "SELECT day, acknowledged FROM pushes_per_day WHERE day > ? ORDER BY day", [.integer(Int64(first))]
        ) { row in
            (day: Double(row.int(0) ?? 0) * 86_400, count: row.int(1) ?? 0)
        }
        return (partial > 0 ? [(day: first * 86_400, count: partial)] : []) + whole
    }

    /// The budget planner's decisions for runs it decided on since `since`, oldest first, as
    /// (when, level name; nil: no card). Read from the runs' state, among runs updated since then
    /// (a decision is taken on a run's first delivery, so the run was updated at or after it);
    /// at most `limit`, the newest kept. `runs_by_card_decision` indexes the decision time itself,
    /// so the newest `limit` come straight from it, without reading every run of the period.
    public func cardDecisions(since: UnixTime, limit: Int = 5_000) throws -> [(at: UnixTime, level: String?)] {
        let decisions = try connection.query(
            """
            SELECT json_extract(state, '$.cardDecision.decidedAt') AS at, json_extract(state, '$.cardDecision.level')
            FROM runs
            WHERE updated_at >= ? AND at >= ? ORDER BY at DESC LIMIT ?
            """,
            [.real(since), .real(since), .integer(Int64(limit))]
        ) { row in
            (at: row.double(0) ?? 0, level: row.string(1))
        }
        return decisions.reversed()
    }
}
