import BridgeCore
import Foundation

/// A run as storage holds it, for `runs list/show` and the engine's restart.
public struct StoredRun: Sendable, Equatable {
    public var state: RunState
    public var slug: String
    public var released: Bool
    public var updatedAt: UnixTime

    public init(state: RunState, slug: String, released: Bool, updatedAt: UnixTime) {
        self.state = state
        self.slug = slug
        self.released = released
        self.updatedAt = updatedAt
    }

    /// `queued`, `in_progress` or `completed`, as a person reads it.
    public var status: String {
        if state.completion != nil { return "completed" }
        return StepPlanner.plan(for: state).hasStarted ? "in_progress" : "queued"
    }
}

/// `runs` and `jobs` (a run's jobs are written with it and pruned with it): the ingest's upsert,
/// one attempt or every attempt of a run id, and the planner's decisions for the month chart.
extension BridgeDatabase {
    /// Writes the run's row and the rows of the jobs in `jobs` (the ones that changed).
    ///
    /// `released` is set by a statement of its own that writes only when it changes: SQLite
    /// rewrites every index whose columns (or partial-index condition) an `UPDATE` sets, changed
    /// or not, and `runs_in_flight` is one whose condition is `released`. In the upsert, it cost
    /// a WAL page on most deliveries for a flag that changes once per run.
    func saveRun(_ state: RunState, slug: String, released: Bool, jobs: [JobRecord], at now: UnixTime) throws {
        let stored = StoredRun(state: state, slug: slug, released: released, updatedAt: now)
        let key: [SQLiteValue] = [
            .text(state.key.repository), .integer(Int64(state.key.runID)), .integer(Int64(state.key.attempt)),
        ]
        try store.run(
            """
            INSERT INTO runs (repository, run_id, attempt, workflow, branch, run_number, status, conclusion, slug,
                released, first_seen_at, updated_at, state)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (repository, run_id, attempt) DO UPDATE SET workflow = excluded.workflow,
                branch = excluded.branch, run_number = excluded.run_number, status = excluded.status,
                conclusion = excluded.conclusion, updated_at = excluded.updated_at, state = excluded.state
            """,
            key + [
                .string(state.workflowName), .string(state.headBranch), .int(state.run?.runNumber),
                .text(stored.status), .string(state.completion?.conclusion), .text(slug), .integer(released ? 1 : 0),
                .real(state.firstSeenAt), .real(now), .text(try RunStateJSON.text(of: state) ?? json(state)),
            ])
        try store.run(
            "UPDATE runs SET released = ?4 WHERE repository = ?1 AND run_id = ?2 AND attempt = ?3 AND released != ?4",
            key + [.integer(released ? 1 : 0)])
        for job in jobs {
            try store.run(
                """
                INSERT INTO jobs (repository, run_id, attempt, job_id, name, status, conclusion, started_at,
                    completed_at, check_run, labels)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (repository, run_id, attempt, job_id) DO UPDATE SET name = excluded.name,
                    status = excluded.status, conclusion = excluded.conclusion, started_at = excluded.started_at,
                    completed_at = excluded.completed_at, check_run = excluded.check_run, labels = excluded.labels
                """,
                [
                    .text(state.key.repository), .integer(Int64(state.key.runID)),
                    .integer(Int64(state.key.attempt)), .integer(Int64(job.id)), .text(job.name),
                    .text(job.status.rawValue), .string(job.conclusion), .double(job.startedAt),
                    .double(job.completedAt), .integer(job.isCheckRun ? 1 : 0),
                    .string(job.labels.map { JSONValue.array($0.map(JSONValue.string)).canonicalString }),
                ])
        }
    }

    /// One run attempt as stored; nil when it was never recorded (or retention removed it).
    public func storedRun(_ key: RunKey) throws -> StoredRun? {
        try store.queryOne(
            "SELECT state, slug, released, updated_at FROM runs WHERE repository = ? AND run_id = ? AND attempt = ?",
            [.text(key.repository), .integer(Int64(key.runID)), .integer(Int64(key.attempt))]
        ) { row in
            StoredRun(
                state: try decode(RunState.self, row.string(0) ?? ""), slug: row.string(1) ?? "",
                released: row.int(2) == 1, updatedAt: row.double(3) ?? 0)
        }
    }

    /// Every attempt of a run id (newest first), across repositories: `runs_by_run_id`, since the
    /// primary key starts with the repository, which the caller does not know.
    public func runAttempts(runID: Int) throws -> [StoredRun] {
        try store.query(
            "SELECT state, slug, released, updated_at FROM runs WHERE run_id = ? ORDER BY attempt DESC",
            [.integer(Int64(runID))]
        ) { row in
            StoredRun(
                state: try decode(RunState.self, row.string(0) ?? ""), slug: row.string(1) ?? "",
                released: row.int(2) == 1, updatedAt: row.double(3) ?? 0)
        }
    }

    /// The budget planner's decisions for runs it decided on since `since`, oldest first, as
    /// (when, level name; nil: no card). Read from the runs' state, among runs updated since then
    /// (a decision is taken on a run's first delivery, so the run was updated at or after it);
    /// at most `limit`, the newest kept. `runs_by_card_decision` indexes the decision time itself,
    /// so the newest `limit` come straight from it, without reading every run of the period.
    public func cardDecisions(since: UnixTime, limit: Int = 5_000) throws -> [(at: UnixTime, level: String?)] {
        let decisions = try store.query(
            store.dialect == .sqlite
                ? """
                SELECT json_extract(state, '$.cardDecision.decidedAt') AS at, json_extract(state, '$.cardDecision.level')
                FROM runs
                WHERE updated_at >= ? AND at >= ? ORDER BY at DESC LIMIT ?
                """
                // The expression `runs_by_card_decision` is built on, spelled out: PostgreSQL's
                // WHERE cannot name an output column.
                : """
                SELECT (run_state_json(state) #>> '{cardDecision,decidedAt}')::double precision,
                    run_state_json(state) #>> '{cardDecision,level}'
                FROM runs
                WHERE updated_at >= ? AND (run_state_json(state) #>> '{cardDecision,decidedAt}')::double precision >= ?
                ORDER BY 1 DESC LIMIT ?
                """,
            [.real(since), .real(since), .integer(Int64(limit))]
        ) { row in
            (at: row.double(0) ?? 0, level: row.string(1))
        }
        return decisions.reversed()
    }
}
