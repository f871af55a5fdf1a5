import BridgeCore

/// The engine's `HistoryProvider` backed by the daemon's database: each lookup one indexed read,
/// on the caller's connection, so inside an ingest transaction it sees that transaction's writes.
public struct StoreHistory: HistoryProvider {
    public typealias Failure = any Error

    let database: BridgeDatabase

    public init(_ database: BridgeDatabase) {
        self.database = database
    }

    /// The newest runs first through `step_history_recent` (one row per run at position 0), then
    /// each run's steps through the primary key: at most 20 runs read, whatever the history holds.
    public func finishedRuns(repository: String, workflow: String) throws -> [RunSummary] {
        let keys = try database.store.query(
            """
            SELECT run_id, attempt FROM step_history
            WHERE repository = ? AND workflow = ? AND position = 0
            ORDER BY finished_at DESC, run_id DESC, attempt DESC LIMIT ?
            """, [.text(repository), .text(workflow), .integer(Int64(RunHistory.runsKeptPerWorkflow))]
        ) { row in RunKey(repository: repository, runID: row.int(0) ?? 0, attempt: row.int(1) ?? 1) }
        var summaries: [RunSummary] = []
        for key in keys.reversed() {
            let rows = try database.store.query(
                """
                SELECT workflow, branch, conclusion, finished_at, step, job_count, duration FROM step_history
                WHERE repository = ? AND run_id = ? AND attempt = ? ORDER BY position
                """, [.text(key.repository), .integer(Int64(key.runID)), .integer(Int64(key.attempt))]
            ) { row in
                (
                    row.string(0) ?? "", row.string(1), row.string(2) ?? "", row.double(3) ?? 0,
                    GroupSummary(name: row.string(4) ?? "", jobCount: row.int(5) ?? 0, duration: row.double(6))
                )
            }
            guard let first = rows.first else { continue }
            summaries.append(
                RunSummary(
                    key: key, workflow: first.0, branch: first.1, conclusion: first.2, finishedAt: first.3,
                    groups: rows.map(\.4)))
        }
        return summaries
    }

    public func storedRun(_ key: RunKey) throws -> StoredRunState? {
        try database.store.queryOne(
            "SELECT state, slug, released FROM runs WHERE repository = ? AND run_id = ? AND attempt = ?",
            [.text(key.repository), .integer(Int64(key.runID)), .integer(Int64(key.attempt))]
        ) { row in
            StoredRunState(
                state: try database.decode(RunState.self, row.string(0) ?? ""), slug: row.string(1) ?? "",
                released: row.int(2) == 1)
        }
    }

    public func latestAttempt(repository: String, runID: Int, below attempt: Int) throws -> RunState? {
        try database.store.queryOne(
            """
            SELECT state FROM runs WHERE repository = ? AND run_id = ? AND attempt < ? AND attempt >= 1
            ORDER BY attempt DESC LIMIT 1
            """, [.text(repository), .integer(Int64(runID)), .integer(Int64(attempt))]
        ) { row in try database.decode(RunState.self, row.string(0) ?? "") }
    }

    /// Through `step_history_runs_by_branch` (repository, workflow, branch, finished_at; the first
    /// step of each finished run): the walk starts at `before` and stops at the first decisive row.
    public func lastDecisiveRun(
        repository: String, workflow: String, branch: String, before: UnixTime, excluding key: RunKey
    ) throws -> (finishedAt: UnixTime, conclusion: String)? {
        try database.store.queryOne(
            """
            SELECT finished_at, conclusion FROM step_history
            WHERE repository = ? AND workflow = ? AND branch = ? AND position = 0 AND finished_at <= ?
                AND conclusion IN ('success', 'failure', 'timed_out', 'startup_failure')
                AND NOT (run_id = ? AND attempt = ?)
            ORDER BY finished_at DESC LIMIT 1
            """,
            [
                .text(repository), .text(workflow), .text(branch), .real(before), .integer(Int64(key.runID)),
                .integer(Int64(key.attempt)),
            ]
        ) { row in (finishedAt: row.double(0) ?? 0, conclusion: row.string(1) ?? "") }
    }

    public func storedSession(slug: String) throws -> StoredSessionState? {
        try database.store.queryOne(
            "SELECT session, progress_floor FROM activities WHERE slug = ?", [.text(slug)]
        ) { row in
            StoredSessionState(
                session: try database.decode(ActivitySession.self, row.string(0) ?? ""),
                floor: try row.string(1).map { try database.decode(ProgressFloor.self, $0) })
        }
    }
}

/// `step_history`'s write side: a finished run's steps, replaced whole, one row per step.
extension BridgeDatabase {
    func saveHistory(_ summary: RunSummary) throws {
        let key = summary.key
        try store.run(
            "DELETE FROM step_history WHERE repository = ? AND run_id = ? AND attempt = ?",
            [.text(key.repository), .integer(Int64(key.runID)), .integer(Int64(key.attempt))])
        for (position, group) in summary.groups.enumerated() {
            try store.run(
                """
                INSERT INTO step_history (repository, run_id, attempt, workflow, branch, conclusion, finished_at,
                    position, step, job_count, duration)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(key.repository), .integer(Int64(key.runID)), .integer(Int64(key.attempt)),
                    .text(summary.workflow), .string(summary.branch), .text(summary.conclusion),
                    .real(summary.finishedAt), .integer(Int64(position)), .text(group.name),
                    .integer(Int64(group.jobCount)), .double(group.duration),
                ])
        }
    }
}
