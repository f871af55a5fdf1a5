import BridgeCore
import Foundation

/// Retention: removing, in small batches, what no run in flight and no estimate needs any more, and
/// giving the space back.
///
/// Every batch is its own short transaction of at most `retentionBatchSize` rows of the table it
/// prunes (a run's jobs and pushes, a finished run's steps go with it), so the daemon runs one batch
/// between two ingest groups and a delivery never waits behind a long delete. Every statement is
/// served by an index (`retentionStatements`; a test reads their query plans), so a batch costs the
/// same on a database with a year of rows as on an empty one.
extension BridgeDatabase {
    /// Rows (runs, for runs and step history) one statement or batch removes at most: a batch
    /// then takes a few milliseconds, about as long as one ingest group.
    public static let retentionBatchSize = 200

    /// Free space kept in the file rather than given back: what the next ten minutes of
    /// deliveries would otherwise have to grow the file for. Steady state reuses freed pages, so
    /// giving them all back only to allocate them again would cost writes for nothing.
    public static let freePageReserveBytes = 16 << 20
    /// The most pages one `incremental_vacuum` moves: a bounded step, like every other batch.
    public static let vacuumPagesPerStep = 2_048

    /// Drops raw payloads received before `cutoff` (the delivery rows stay); returns how many.
    @discardableResult
    public func prunePayloads(receivedBefore cutoff: UnixTime, limit: Int = 1_000) throws -> Int {
        try store.run(store.addressingRows(Self.prunePayloadsSQL), [.real(cutoff), .integer(Int64(limit))])
    }

    // MARK: One batch of everything

    /// Runs one batch for every table (payloads, deliveries, finished runs, ended cards, step
    /// history), each in its own transaction, adding what it removed to `pass`; once no table had
    /// a full batch, gives free pages beyond the reserve back (one bounded step). Returns whether
    /// anything is left, so the caller calls again (after letting ingest have its turn) or rests
    /// until the next period.
    @discardableResult
    public func pruneRetention(
        _ pass: inout RetentionPass, settings: RetentionSettings, payloadRetention: Int, at now: UnixTime,
        limit: Int = retentionBatchSize
    ) throws -> Bool {
        precondition(limit >= 1, "a retention batch of \(limit) rows")
        let payloads = try prunePayloads(receivedBefore: now - Double(payloadRetention), limit: limit)
        let deliveries = try pruneDeliveries(
            receivedBefore: now - Double(settings.deliveries), retention: settings.deliveries, at: now, limit: limit)
        let runs = try pruneRuns(
            updatedBefore: now - Double(settings.runs), retention: settings.runs, at: now, limit: limit)
        let activities = try pruneActivities(
            endedBefore: now - Double(settings.activities), retention: settings.activities, at: now, limit: limit)
        let requests = try pruneRecoveryRequests(before: now - Self.recoveryRequestRetention, limit: limit)
        let tokens = try pruneActionTokens(expiredBefore: now - Self.actionTokenRetention, limit: limit)
        let presses = try pruneActions(pressedBefore: now - Double(settings.runs), limit: limit)

        // The step-history scan starts over once a day (see `RetentionPass`), only once caught up.
        if let started = pass.stepHistoryScanStartedAt, pass.stepHistoryCaughtUp,
            now - started >= RetentionPass.stepHistoryRescanInterval
        {
            pass.stepHistoryCursor = nil
            pass.stepHistoryScanStartedAt = nil
        }
        if pass.stepHistoryScanStartedAt == nil { pass.stepHistoryScanStartedAt = now }
        let steps = try pruneStepHistory(
            finishedBefore: now - Double(settings.stepHistory), retention: settings.stepHistory,
            cursor: &pass.stepHistoryCursor, at: now, limit: limit)
        pass.stepHistoryCaughtUp = steps.examined < limit

        pass.payloads += payloads
        pass.deliveries += deliveries
        pass.runs += runs
        pass.activities += activities
        pass.recoveryRequests += requests
        pass.actionTokens += tokens
        pass.actions += presses
        pass.stepHistoryRuns += steps.pruned
        var more =
            payloads == limit || deliveries == limit || runs == limit || activities == limit || requests == limit
            || tokens == limit || presses == limit
            || !pass.stepHistoryCaughtUp
        if !more {
            let released = try releaseFreePages()
            pass.pagesReleased += released.pages
            more = released.more
        }
        return more
    }

    // MARK: Each table

    /// How long a redelivery request is remembered after it was last made: GitHub keeps a
    /// delivery 3 days (7 on Enterprise Server), so after a week none can be asked for again.
    public static let recoveryRequestRetention: UnixTime = 7 * 86_400

    /// Removes up to `limit` redelivery requests last made before `cutoff`. Returns how many.
    @discardableResult
    public func pruneRecoveryRequests(before cutoff: UnixTime, limit: Int = retentionBatchSize) throws -> Int {
        try deleteBatch(from: "recovery_requests", olderThan: cutoff, in: "last_requested_at", limit: limit)
    }

    /// Deletes up to `limit` rows of `table` whose `column` (indexed) is before `cutoff`: one
    /// short batch of a table that only ever loses its oldest rows. Returns how many.
    /// `table` and `column` are this file's constants, never input.
    func deleteBatch(from table: String, olderThan cutoff: UnixTime, in column: String, limit: Int) throws -> Int {
        try store.run(
            store.addressingRows(
                """
                DELETE FROM \(table) WHERE rowid IN (
                    SELECT rowid FROM \(table) WHERE \(column) < ? ORDER BY \(column) LIMIT ?)
                """),
            [.real(cutoff), .integer(Int64(limit))])
    }

    /// Removes up to `limit` delivery rows received before `cutoff` (`retention` seconds before
    /// `now`), and notes the cutoff for `explain` and `runs show`. Returns how many.
    @discardableResult
    public func pruneDeliveries(
        receivedBefore cutoff: UnixTime, retention: Int, at now: UnixTime, limit: Int = retentionBatchSize
    ) throws -> Int {
        try store.transaction {
            let removed = try store.run(
                store.addressingRows(Self.deleteDeliveriesSQL), [.real(cutoff), .integer(Int64(limit))])
            if removed > 0 { try mark("deliveries", before: cutoff, retention: retention, at: now) }
            return removed
        }
    }

    /// Removes up to `limit` finished runs (`released = 1`) last updated before `cutoff`, with
    /// their jobs (the foreign key cascades; the connection enforces foreign keys) and pushes, and
    /// records per repository the highest run id removed. A run not released is in flight and is
    /// never removed, however old its last update. Returns how many runs.
    @discardableResult
    public func pruneRuns(
        updatedBefore cutoff: UnixTime, retention: Int, at now: UnixTime, limit: Int = retentionBatchSize
    ) throws -> Int {
        try store.transaction {
            let keys = try store.query(Self.prunableRunsSQL, [.real(cutoff), .integer(Int64(limit))]) { row in
                RunKey(repository: row.string(0) ?? "", runID: row.int(1) ?? 0, attempt: row.int(2) ?? 1)
            }
            var highest: [String: Int] = [:]
            for key in keys {
                let arguments: [SQLiteValue] = [
                    .text(key.repository), .integer(Int64(key.runID)), .integer(Int64(key.attempt)),
                ]
                try store.run(Self.deleteRunPushesSQL, arguments)
                try store.run(Self.deleteRunAlertsSQL, arguments)
                try store.run(Self.deleteRunSQL, arguments)
                highest[key.repository] = max(highest[key.repository] ?? key.runID, key.runID)
            }
            for (repository, runID) in highest.sorted(by: { $0.key < $1.key }) {
                try store.run(
                    Self.markPrunedRunsSQL,
                    [.text(repository), .integer(Int64(runID)), .real(cutoff), .integer(Int64(retention))])
            }
            if !keys.isEmpty { try mark("runs", before: cutoff, retention: retention, at: now) }
            return keys.count
        }
    }

    /// Removes up to `limit` ended cards last updated before `cutoff`. A card that is not ended
    /// (a run draws on it) is never removed. Returns how many.
    @discardableResult
    public func pruneActivities(
        endedBefore cutoff: UnixTime, retention: Int, at now: UnixTime, limit: Int = retentionBatchSize
    ) throws -> Int {
        try store.transaction {
            let removed = try store.run(
                store.addressingRows(Self.deleteActivitiesSQL), [.real(cutoff), .integer(Int64(limit))])
            if removed > 0 { try mark("activities", before: cutoff, retention: retention, at: now) }
            return removed
        }
    }

    /// Looks at up to `limit` finished runs in step history that finished before `cutoff`, oldest
    /// first from `cursor`, and removes the steps of each that is not among the last
    /// `RetentionSettings.stepHistoryKeptPerBranch` finished runs of its repository + workflow +
    /// branch (a missing branch is a branch of its own). Moves `cursor` past the runs looked at.
    ///
    /// Each run is found through `step_history_runs_by_age` and judged by counting, through
    /// `step_history_runs_by_branch`, at most that many runs of its branch that finished after
    /// it: a batch reads a bounded number of index entries whatever the table holds.
    /// - Returns: runs removed, and runs looked at (fewer than `limit`: the scan caught up).
    public func pruneStepHistory(
        finishedBefore cutoff: UnixTime, retention: Int, cursor: inout RetentionPass.StepHistoryCursor?,
        at now: UnixTime, limit: Int = retentionBatchSize
    ) throws -> (pruned: Int, examined: Int) {
        let start = cursor ?? RetentionPass.StepHistoryCursor(finishedAt: -.greatestFiniteMagnitude, rowID: .min)
        // SQLite breaks ties on the rowid its index carries; PostgreSQL has no row number that
        // lasts, so it breaks them on the run's key (`step_history_runs_by_age` holds it there).
        let (candidatesSQL, position): (String, [SQLiteValue]) =
            switch store.dialect {
            case .sqlite: (Self.stepHistoryCandidatesSQL, [.integer(start.rowID)])
            case .postgresql:
                (
                    Self.stepHistoryCandidatesByKeySQL,
                    [
                        .text(start.key?.repository ?? ""), .integer(Int64(start.key?.runID ?? .min)),
                        .integer(Int64(start.key?.attempt ?? .min)),
                    ]
                )
            }
        let result = try store.transaction { () throws -> (Int, Int, RetentionPass.StepHistoryCursor?) in
            let candidates = try store.query(
                candidatesSQL, [.real(cutoff), .real(start.finishedAt)] + position + [.integer(Int64(limit))]
            ) { row in
                (
                    rowID: row.int64(0) ?? 0,
                    key: RunKey(repository: row.string(1) ?? "", runID: row.int(2) ?? 0, attempt: row.int(3) ?? 1),
                    workflow: row.string(4) ?? "", branch: row.string(5), finishedAt: row.double(6) ?? 0
                )
            }
            var pruned = 0
            for candidate in candidates {
                let newer =
                    try store.queryOne(
                        Self.newerRunsOfBranchSQL,
                        [
                            .text(candidate.key.repository), .text(candidate.workflow), .string(candidate.branch),
                            .real(candidate.finishedAt), .integer(Int64(RetentionSettings.stepHistoryKeptPerBranch)),
                        ]
                    ) { $0.int(0) ?? 0 } ?? 0
                guard newer >= RetentionSettings.stepHistoryKeptPerBranch else { continue }
                try store.run(
                    Self.deleteStepHistoryRunSQL,
                    [
                        .text(candidate.key.repository), .integer(Int64(candidate.key.runID)),
                        .integer(Int64(candidate.key.attempt)),
                    ])
                pruned += 1
            }
            if pruned > 0 { try mark("step_history", before: cutoff, retention: retention, at: now) }
            let last = candidates.last.map {
                RetentionPass.StepHistoryCursor(finishedAt: $0.finishedAt, rowID: $0.rowID, key: $0.key)
            }
            return (pruned, candidates.count, last)
        }
        if let moved = result.2 { cursor = moved }
        return (result.0, result.1)
    }

    // MARK: Space

    /// Gives free pages beyond `freePageReserveBytes` back to the file system, at most
    /// `vacuumPagesPerStep` of them, when the database was created with `auto_vacuum =
    /// INCREMENTAL`. A database from before that (auto_vacuum NONE) keeps its free pages and
    /// reuses them for new rows, so pruning stops its growth without shrinking it; converting it
    /// once, while the daemon is stopped, is `sqlite3 DB 'PRAGMA auto_vacuum=INCREMENTAL; VACUUM;'`
    /// (a rewrite of the whole file, which is why it is never done automatically at start).
    /// - Returns: pages given back, and whether more than the reserve is still free.
    public func releaseFreePages(
        reserveBytes: Int = freePageReserveBytes, atMost maxPages: Int = vacuumPagesPerStep
    ) throws -> (pages: Int, more: Bool) {
        // PostgreSQL's autovacuum makes the space of removed rows reusable by itself.
        guard store.dialect == .sqlite else { return (0, false) }
        guard try store.queryOne("PRAGMA auto_vacuum", [], { $0.int(0) ?? 0 }) == 2 else { return (0, false) }
        let pageSize = try store.queryOne("PRAGMA page_size", [], { $0.int(0) ?? 0 }) ?? 4_096
        let reserve = reserveBytes / max(pageSize, 512)
        let free = try freePages()
        guard free > reserve else { return (0, false) }
        try store.execute("PRAGMA incremental_vacuum(\(min(free - reserve, maxPages)))")
        let left = try freePages()
        return (free - left, left > reserve)
    }

    /// Pages in the file that hold nothing (`PRAGMA freelist_count`); 0 on PostgreSQL.
    public func freePages() throws -> Int {
        guard store.dialect == .sqlite else { return 0 }
        return try store.queryOne("PRAGMA freelist_count", [], { $0.int(0) ?? 0 }) ?? 0
    }

    /// Sets `auto_vacuum = INCREMENTAL` on a database with no table yet. SQLite only takes the
    /// setting before the first table is created, and the connection has already switched the
    /// file to WAL, which fixes the header: the `VACUUM` that applies it costs nothing on an empty
    /// file. An existing database is left as it is (see `releaseFreePages`).
    static func enableIncrementalVacuumIfEmpty(_ connection: SQLiteConnection) throws(StoreOpenError) {
        do {
            let objects = try connection.queryOne("SELECT count(*) FROM sqlite_schema", [], { $0.int(0) ?? 0 }) ?? 0
            guard objects == 0, try connection.queryOne("PRAGMA auto_vacuum", [], { $0.int(0) ?? 0 }) != 2 else {
                return
            }
            try connection.execute("PRAGMA auto_vacuum = INCREMENTAL; VACUUM")
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch {
            throw .sqlite(SQLiteError(code: 1, message: String(describing: error)))
        }
    }

    // MARK: What was removed

    /// The repositories whose pruned runs reach `runID` or beyond: a run id not found but at or
    /// below one of these was most likely removed by retention rather than never recorded.
    public func prunedRunMarks(coveringRunID runID: Int) throws -> [RetentionMark] {
        try store.query(
            """
            SELECT repository, through_run_id, before, retention FROM pruned_runs
            WHERE through_run_id >= ? ORDER BY repository
            """,
            [.integer(Int64(runID))]
        ) { row in
            RetentionMark(
                table: "runs", repository: row.string(0), throughRunID: row.int(1), before: row.double(2) ?? 0,
                retention: row.int(3) ?? 0)
        }
    }

    /// The latest cutoff retention applied to `table` (`deliveries`, `runs`, `activities`,
    /// `step_history`); nil when it never removed anything there.
    public func retentionMark(_ table: String) throws -> RetentionMark? {
        try store.queryOne(
            "SELECT before, retention FROM retention_marks WHERE what = ?", [.text(table)]
        ) { row in
            RetentionMark(table: table, before: row.double(0) ?? 0, retention: row.int(1) ?? 0)
        }
    }

    private func mark(_ table: String, before cutoff: UnixTime, retention: Int, at now: UnixTime) throws {
        try store.run(
            """
            INSERT INTO retention_marks (what, before, retention, pruned_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (what) DO UPDATE SET
                before = CASE WHEN excluded.before > retention_marks.before THEN excluded.before
                    ELSE retention_marks.before END,
                retention = excluded.retention,
                pruned_at = excluded.pruned_at
            """,
            [.text(table), .real(cutoff), .integer(Int64(retention)), .real(now)])
    }

    // MARK: Statements

    // Through `deliveries_with_payload`: the rows whose payload is already gone (most of the
    // deliveries retention keeps) are not walked again by every batch. Oldest first, in the
    // index's own order (free on SQLite): PostgreSQL returns rows in no fixed order otherwise,
    // and a batch that stops early should have removed the oldest.
    static let prunePayloadsSQL = """
        UPDATE deliveries SET payload = NULL WHERE rowid IN (
            SELECT rowid FROM deliveries WHERE received_at < ? AND payload IS NOT NULL ORDER BY received_at LIMIT ?)
        """
    static let deleteDeliveriesSQL = """
        DELETE FROM deliveries WHERE rowid IN (
            SELECT rowid FROM deliveries WHERE received_at < ? ORDER BY received_at LIMIT ?)
        """
    // `released = 1` and `phase = 'ended'` are literals so the partial indexes apply.
    static let prunableRunsSQL = """
        SELECT repository, run_id, attempt FROM runs WHERE released = 1 AND updated_at < ? ORDER BY updated_at LIMIT ?
        """
    static let deleteRunPushesSQL = "DELETE FROM pushes WHERE repository = ? AND run_id = ? AND attempt = ?"
    /// The run's alerts go with it (through the unique key's repository and run id).
    static let deleteRunAlertsSQL = "DELETE FROM alerts WHERE repository = ? AND run_id = ? AND attempt = ?"
    static let deleteRunSQL = "DELETE FROM runs WHERE repository = ? AND run_id = ? AND attempt = ? AND released = 1"
    static let markPrunedRunsSQL = """
        INSERT INTO pruned_runs (repository, through_run_id, before, retention) VALUES (?, ?, ?, ?)
        ON CONFLICT (repository) DO UPDATE SET
            through_run_id = CASE WHEN excluded.through_run_id > pruned_runs.through_run_id
                THEN excluded.through_run_id ELSE pruned_runs.through_run_id END,
            before = CASE WHEN excluded.before > pruned_runs.before THEN excluded.before ELSE pruned_runs.before END,
            retention = excluded.retention
        """
    static let deleteActivitiesSQL = """
        DELETE FROM activities WHERE rowid IN (
            SELECT rowid FROM activities WHERE phase = 'ended' AND updated_at < ? LIMIT ?)
        """
    static let stepHistoryCandidatesSQL = """
        SELECT rowid, repository, run_id, attempt, workflow, branch, finished_at FROM step_history
        WHERE position = 0 AND finished_at < ? AND (finished_at, rowid) > (?, ?)
        ORDER BY finished_at, rowid LIMIT ?
        """
    /// PostgreSQL's `stepHistoryCandidatesSQL`: the same runs in the same order of age, ties
    /// broken on the key instead of the rowid.
    static let stepHistoryCandidatesByKeySQL = """
        SELECT 0, repository, run_id, attempt, workflow, branch, finished_at FROM step_history
        WHERE position = 0 AND finished_at < ? AND (finished_at, repository, run_id, attempt) > (?, ?, ?, ?)
        ORDER BY finished_at, repository, run_id, attempt LIMIT ?
        """
    static let newerRunsOfBranchSQL = """
        SELECT count(*) FROM (
            SELECT 1 FROM step_history
            WHERE repository = ? AND workflow = ? AND branch IS NOT DISTINCT FROM ? AND position = 0 AND finished_at > ? LIMIT ?
        ) AS newer
        """
    static let deleteStepHistoryRunSQL = "DELETE FROM step_history WHERE repository = ? AND run_id = ? AND attempt = ?"

    /// Every statement pruning runs against a table that grows, for the test that reads their
    /// query plans: none may scan a table.
    public static let retentionStatements = [
        prunePayloadsSQL, deleteDeliveriesSQL, prunableRunsSQL, deleteRunPushesSQL, deleteRunAlertsSQL, deleteRunSQL,
        deleteActivitiesSQL,
        stepHistoryCandidatesSQL, newerRunsOfBranchSQL, deleteStepHistoryRunSQL,
    ]
}
