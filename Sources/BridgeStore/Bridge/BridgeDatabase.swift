import BridgeCore
import Foundation

/// The bridge's SQLite database: deliveries, runs and their jobs, step history, activities and
/// pushes. Not thread-safe: one owner (the daemon's service actor) uses it; readers such as the
/// CLI open their own read-only instance, which WAL lets them do while the daemon writes.
public final class BridgeDatabase {
    /// Package-wide, not public: the daemon goes through `write`, `read` and the queries; tests in
    /// this package may still run raw SQL on it.
    package let connection: SQLiteConnection
    public let path: String
    /// Writes the JSON columns other than the run state (session, progress floor, dispatch gate,
    /// the rows of the other tables). Keys sorted, so the same value is always the same text.
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    private let decoder = JSONDecoder()

    /// Opens (creating and migrating when `readOnly` is false) the database at `path`. `progress`
    /// hears of each migration applied (see `MigrationRunner.migrate`). A new database is set to
    /// `auto_vacuum = INCREMENTAL` before its first table (see `enableIncrementalVacuumIfEmpty`).
    public init(
        path: String, readOnly: Bool = false, progress: ((MigrationProgress) -> Void)? = nil
    ) throws(StoreOpenError) {
        self.path = path
        do {
            connection = try SQLiteConnection(path: path, mode: readOnly ? .readOnly : .readWrite)
        } catch {
            throw .sqlite(error)
        }
        if readOnly {
            try MigrationRunner.checkReadable(connection, BridgeSchema.migrations)
        } else {
            try Self.enableIncrementalVacuumIfEmpty(connection)
            try MigrationRunner.migrate(connection, BridgeSchema.migrations, progress: progress)
        }
    }

    /// Moves WAL checkpoints off this connection: starts a `WALCheckpointer` on the same file (its own connection
    /// and thread), then turns this connection's automatic checkpoints off and sets its `journal_size_limit` to
    /// twice `configuration.walSizeLimit`: a WAL the checkpointer started over is written again in place (cheaper
    /// than growing a file block by block), and one that grew past twice the limit shrinks back on disk. For the daemon's writer; call `stop()` on the result before closing this database.
    ///
    /// Throws, leaving automatic checkpoints on, when the database is read-only or the checkpointer's connection
    /// cannot be opened.
    public func startCheckpointer(
        _ configuration: WALCheckpointer.Configuration = .init(),
        onError: @escaping @Sendable (String) -> Void
    ) throws(SQLiteError) -> WALCheckpointer {
        guard connection.mode == .readWrite else {
            throw .misuse("cannot checkpoint '\(path)' from a read-only connection")
        }
        let checkpointer = try WALCheckpointer(path: path, configuration: configuration, onError: onError)
        do {
            try connection.execute("PRAGMA journal_size_limit = \(2 * configuration.walSizeLimit)")
            try connection.disableAutomaticCheckpoints()
            // The checkpointer's restarts hold the write lock for milliseconds; wait for them finely.
            try connection.pollForLocksFinely()
        } catch {
            checkpointer.stop()
            throw error
        }
        return checkpointer
    }

    // MARK: Ingest

    /// True when a delivery with this id was recorded before (GitHub repeats the id on redelivery).
    public func hasDelivery(_ id: String) throws -> Bool {
        try connection.queryOne("SELECT 1 FROM deliveries WHERE id = ?", [.text(id)]) { _ in true } ?? false
    }

    /// Counts a repeated delivery on its first record.
    public func recordDuplicate(_ id: String, at now: UnixTime) throws {
        try connection.run(
            "UPDATE deliveries SET duplicates = duplicates + 1, last_duplicate_at = ? WHERE id = ?",
            [.real(now), .text(id)])
    }

    /// Records a delivery. Its payload is kept compressed when that is smaller: pass `stored` when
    /// it was compressed already (on the HTTP thread), else it is compressed here.
    public func insert(_ delivery: DeliveryRecord, stored: PayloadCompression.Stored? = nil) throws {
        let payload = stored ?? delivery.payload.map(PayloadCompression.stored)
        try connection.run(
            """
            INSERT INTO deliveries (id, hook_id, event, action, received_at, repository, run_id, run_attempt, outcome,
                reason, content_type, payload, payload_bytes, duplicates, payload_encoding)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(delivery.id), .string(delivery.hookID), .text(delivery.event), .string(delivery.action),
                .real(delivery.receivedAt), .string(delivery.repository), .int(delivery.runID),
                .int(delivery.runAttempt), .text(delivery.outcome.rawValue), .string(delivery.reason),
                .string(delivery.contentType), payload.map { .blob($0.bytes) } ?? .null,
                .integer(Int64(delivery.payloadBytes)), .integer(Int64(delivery.duplicates)),
                .text((payload?.encoding ?? .identity).rawValue),
            ])
    }

    /// Writes every run, card and history entry `changes` names, as the engine now holds them,
    /// with each card's desired content at `now`. Call inside the delivery's transaction.
    public func save(_ rows: EngineRows, at now: UnixTime) throws {
        for run in rows.runs {
            try saveRun(run.state, slug: run.slug, released: run.released, jobs: run.jobs, at: now)
        }
        for summary in rows.history { try saveHistory(summary) }
        for arrival in rows.arrivals {
            try connection.run(
                """
                INSERT INTO run_arrivals (hour, runs) VALUES (?, ?)
                ON CONFLICT (hour) DO UPDATE SET runs = excluded.runs
                """, [.integer(Int64(arrival.hour)), .integer(Int64(arrival.runs))])
        }
        if let gate = rows.gate {
            try connection.run(
                """
                INSERT INTO dispatch_state (id, gate, updated_at) VALUES (1, ?, ?)
                ON CONFLICT (id) DO UPDATE SET gate = excluded.gate, updated_at = excluded.updated_at
                """,
                [.text(try json(gate)), .real(now)])
        }
        for card in rows.cards {
            try saveCard(
                StoredCard(
                    session: card.session, floor: card.floor, desired: card.desired.map(desiredJSON), updatedAt: now))
        }
    }

    // MARK: The door

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`): committed when it returns, rolled
    /// back when it throws. The one way the daemon writes (GRDB's `write { db in … }`).
    public func write<T>(_ body: (BridgeDatabase) throws -> T) throws -> T {
        try connection.transaction { try body(self) }
    }

    /// Runs `body` in a read transaction: every query in it sees one snapshot, even while the
    /// daemon commits.
    public func read<T>(_ body: (BridgeDatabase) throws -> T) throws -> T {
        try connection.readTransaction { try body(self) }
    }

    /// How long a write waits for another connection's lock before failing with `SQLITE_BUSY`.
    public func setBusyTimeout(milliseconds: Int32) throws {
        try connection.setBusyTimeout(milliseconds: milliseconds)
    }

    /// Whether a write could start now (takes the write lock and lets it go): `/readyz`.
    public func canWrite() -> Bool {
        (try? connection.execute("BEGIN IMMEDIATE; ROLLBACK;")) != nil
    }

    private func desiredJSON(_ desired: DesiredActivity) -> JSONValue {
        var object: [String: JSONValue] = [
            "run": .string(desired.run.description), "content": .object(desired.content),
            "final": .bool(desired.isFinal),
        ]
        if let window = desired.window {
            object["window"] = [
                "step": .number(Double(window.step)), "estimate": .number(window.estimate),
                "started_at": window.startedAt.map { .number($0) } ?? .null,
            ]
        }
        return .object(object)
    }

    /// Writes the run's row and the rows of the jobs in `jobs` (the ones that changed).
    func saveRun(_ state: RunState, slug: String, released: Bool, jobs: [JobRecord], at now: UnixTime) throws {
        let stored = StoredRun(state: state, slug: slug, released: released, updatedAt: now)
        try connection.run(
            """
            INSERT INTO runs (repository, run_id, attempt, workflow, branch, run_number, status, conclusion, slug,
                released, first_seen_at, updated_at, state)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (repository, run_id, attempt) DO UPDATE SET workflow = excluded.workflow,
                branch = excluded.branch, run_number = excluded.run_number, status = excluded.status,
                conclusion = excluded.conclusion, released = excluded.released, updated_at = excluded.updated_at,
                state = excluded.state
            """,
            [
                .text(state.key.repository), .integer(Int64(state.key.runID)), .integer(Int64(state.key.attempt)),
                .string(state.workflowName), .string(state.headBranch), .int(state.run?.runNumber),
                .text(stored.status), .string(state.completion?.conclusion), .text(slug), .integer(released ? 1 : 0),
                .real(state.firstSeenAt), .real(now), .text(try RunStateJSON.text(of: state) ?? json(state)),
            ])
        for job in jobs {
            try connection.run(
                """
                INSERT INTO jobs (repository, run_id, attempt, job_id, name, status, conclusion, started_at,
                    completed_at, check_run)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (repository, run_id, attempt, job_id) DO UPDATE SET name = excluded.name,
                    status = excluded.status, conclusion = excluded.conclusion, started_at = excluded.started_at,
                    completed_at = excluded.completed_at, check_run = excluded.check_run
                """,
                [
                    .text(state.key.repository), .integer(Int64(state.key.runID)),
                    .integer(Int64(state.key.attempt)), .integer(Int64(job.id)), .text(job.name),
                    .text(job.status.rawValue), .string(job.conclusion), .double(job.startedAt),
                    .double(job.completedAt), .integer(job.isCheckRun ? 1 : 0),
                ])
        }
    }

    func saveHistory(_ summary: RunSummary) throws {
        let key = summary.key
        try connection.run(
            "DELETE FROM step_history WHERE repository = ? AND run_id = ? AND attempt = ?",
            [.text(key.repository), .integer(Int64(key.runID)), .integer(Int64(key.attempt))])
        for (position, group) in summary.groups.enumerated() {
            try connection.run(
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

    func saveCard(_ card: StoredCard) throws {
        let session = card.session
        try connection.run(
            """
            INSERT INTO activities (slug, name, owner_repository, owner_run_id, owner_attempt, phase, session,
                progress_floor, desired, acknowledged, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (slug) DO UPDATE SET name = excluded.name, owner_repository = excluded.owner_repository,
                owner_run_id = excluded.owner_run_id, owner_attempt = excluded.owner_attempt, phase = excluded.phase,
                session = excluded.session, progress_floor = excluded.progress_floor, desired = excluded.desired,
                acknowledged = excluded.acknowledged, updated_at = excluded.updated_at
            """,
            [
                .text(session.identity.slug), .text(session.identity.name), .string(session.owner?.repository),
                .int(session.owner?.runID), .int(session.owner?.attempt), .text(session.phase.rawValue),
                .text(try json(session)), try card.floor.map { .text(try json($0)) } ?? .null,
                card.desired.map { .text($0.canonicalString) } ?? .null,
                session.acknowledged.map { .text(JSONValue.object($0.content).canonicalString) } ?? .null,
                .real(card.updatedAt),
            ])
    }

    /// Records a request the dispatcher made and its answer.
    public func insert(_ push: PushRecord) throws {
        try connection.run(
            """
            INSERT INTO pushes (slug, repository, run_id, attempt, kind, method, path, body, sent_at, status, outcome,
                detail)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(push.slug), .text(push.run.repository), .integer(Int64(push.run.runID)),
                .integer(Int64(push.run.attempt)), .text(push.kind), .text(push.method), .text(push.path),
                .text(push.body), .real(push.sentAt), .int(push.status), .text(push.outcome), .string(push.detail),
            ])
    }

    // MARK: Restart

    /// The engine as storage left it, reading only the work in flight: runs not done with their
    /// card (through the partial index `runs_in_flight`), cards not ended, the dispatch gate and
    /// the arrivals of the last 14 days (at most 336 rows). Finished runs, ended cards and history
    /// are read when a delivery needs them (`StoreHistory`), so a start costs the same after a
    /// year as after a day.
    public func loadEngine(
        settings: ActivitySettings, filter: DeliveryFilter, at now: UnixTime,
        historyCapacity: Int = HistoryCache.defaultCapacity
    ) throws -> BridgeEngine {
        var engine = BridgeEngine(settings: settings, filter: filter, historyCapacity: historyCapacity)
        let runs = try connection.query("SELECT state, slug FROM runs WHERE released = 0", []) { row in
            (row.string(0) ?? "", row.string(1) ?? "")
        }
        for (state, slug) in runs {
            engine.restore(run: try decode(RunState.self, state), slug: slug, released: false)
        }
        let cards = try connection.query(
            "SELECT session, progress_floor FROM activities WHERE phase != 'ended'", []
        ) { row in (row.string(0) ?? "", row.string(1)) }
        let history = StoreHistory(self)
        for (session, floor) in cards {
            let session = try decode(ActivitySession.self, session)
            engine.restore(session: session, floor: try floor.map { try decode(ProgressFloor.self, $0) })
            // A card's owner is in flight while the card is; read it should storage say otherwise.
            if let owner = session.owner, engine.runs[owner] == nil, let stored = try history.storedRun(owner) {
                engine.restore(run: stored.state, slug: stored.slug, released: stored.released)
            }
        }
        if let gate = try connection.queryOne(
            "SELECT gate FROM dispatch_state WHERE id = 1", [], { $0.string(0) ?? "" })
        {
            engine.gate = try decode(DispatchGate.self, gate)
        }
        // The budget planner's forecast: runs first seen per hour over the last 14 days.
        let hours = try connection.query(
            "SELECT hour, runs FROM run_arrivals WHERE hour >= ?", [.integer(Int64((now - RunArrivals.window) / 3_600))]
        ) { row in (row.int(0) ?? 0, row.int(1) ?? 0) }
        for (hour, count) in hours { engine.arrivals.record(at: Double(hour) * 3_600, count: count) }
        _ = engine.takeChanges()
        return engine
    }

    // MARK: Retention

    /// Drops raw payloads received before `cutoff` (the delivery rows stay); returns how many.
    @discardableResult
    public func prunePayloads(receivedBefore cutoff: UnixTime, limit: Int = 1_000) throws -> Int {
        try connection.run(Self.prunePayloadsSQL, [.real(cutoff), .integer(Int64(limit))])
        return connection.changes
    }

    // MARK: Encoding

    func json<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try decoder.decode(type, from: Data(text.utf8))
    }
}
