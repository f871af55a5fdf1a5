import BridgeCore
import Foundation

/// The bridge's database, an SQLite file or a PostgreSQL database: deliveries, runs and their jobs, step history, activities and
/// pushes. Each table's statements live with its record type (`DeliveryRecord`, `StoredRun`,
/// `RunListing`, `StoredSession`, `RequestRecord`, `StoreHistory` for step history); this file opens the
/// file, is the door (`write`, `read`), saves what the engine changed and loads it at start;
/// retention's batches, which span tables, are in `BridgeDatabase+Retention.swift`. Not thread-safe: one owner (the daemon's service actor) uses it; readers such as the
/// CLI open their own read-only instance, which WAL lets them do while the daemon writes.
public final class BridgeDatabase {
    /// The connection every statement goes through, to whichever engine the location selected.
    package let store: StoreConnection
    /// The SQLite connection underneath, for what only SQLite has (the checkpointer, busy
    /// timeouts, query plans). Package-wide, not public: the daemon goes through `write`, `read`
    /// and the queries; tests in this package may still run raw SQL on it.
    /// - Precondition: the database is SQLite.
    package var connection: SQLiteConnection {
        guard case .sqlite(let connection) = store.engine else {
            preconditionFailure("\(path) is a PostgreSQL database: it has no SQLite connection")
        }
        return connection
    }
    /// The file for SQLite; the location with any password redacted for PostgreSQL.
    public let path: String
    /// Writes the JSON columns other than the run state (session, progress floor, dispatch gate,
    /// the rows of the other tables). Keys sorted, so the same value is always the same text.
    private let encoder = BridgeDatabase.makeEncoder()
    private let decoder = JSONDecoder()
    /// `delivery_id_layout`'s cutoff, read on first use: the migration wrote it once and nothing
    /// changes it, so the lookups of every delivery (and of every GUID a recovery sweep checks)
    /// need not read it again.
    var legacyDeliveryIDCutoffRead: UnixTime?

    /// Opens (creating and migrating when `readOnly` is false) the database at `path`. `progress`
    /// hears of each migration applied (see `MigrationRunner.migrate`). A new database is set to
    /// `auto_vacuum = INCREMENTAL` before its first table (see `enableIncrementalVacuumIfEmpty`).
    public init(
        path: String, readOnly: Bool = false, progress: ((MigrationProgress) -> Void)? = nil
    ) throws(StoreOpenError) {
        self.path = path
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, mode: readOnly ? .readOnly : .readWrite)
        } catch {
            throw .sqlite(error)
        }
        store = StoreConnection(.sqlite(connection))
        if readOnly {
            try MigrationRunner.checkReadable(connection, BridgeSchema.migrations)
        } else {
            try Self.enableIncrementalVacuumIfEmpty(connection)
            try MigrationRunner.migrate(connection, BridgeSchema.migrations, progress: progress)
        }
    }

    /// Opens the database `location` selects: an SQLite file (see `init(path:)`) or a PostgreSQL
    /// database (see `init(postgresURI:)`).
    public convenience init(
        location: DatabaseLocation, readOnly: Bool = false, progress: ((MigrationProgress) -> Void)? = nil
    ) throws(StoreOpenError) {
        switch location {
        case .sqlite(let path): try self.init(path: path, readOnly: readOnly, progress: progress)
        case .postgresql(let uri): try self.init(postgresURI: uri, readOnly: readOnly, progress: progress)
        }
    }

    /// Connects to the PostgreSQL database at `uri` and, unless `readOnly`, brings its schema up
    /// to date under the migration lock (`PostgresMigrationRunner`), so instances starting together
    /// migrate once. A read-only connection asks the server to refuse writes
    /// (`default_transaction_read_only`), so the CLI cannot change what the daemons share, and
    /// refuses a schema this build does not match.
    public init(
        postgresURI uri: String, readOnly: Bool = false, progress: ((MigrationProgress) -> Void)? = nil
    ) throws(StoreOpenError) {
        // A writer frozen inside a transaction (SIGSTOP, a stalled VM) would hold the leadership
        // row's share lock, and with it every takeover, for as long as it stays frozen: the server
        // ends such a session after the lease's own session timeout.
        let options =
            readOnly
            ? "-c default_transaction_read_only=on"
            : "-c idle_in_transaction_session_timeout=\(Self.idleInTransactionTimeoutMilliseconds)"
        let open = { () throws(PostgresError) -> PostgresConnection in
            try PostgresConnection(uri: uri, parameters: [("options", options)])
        }
        let connection: PostgresConnection
        do {
            connection = try open()
        } catch {
            throw .postgres(error)
        }
        path = connection.location
        store = StoreConnection(.postgres(connection), reopen: { try open() })
        if readOnly {
            try PostgresMigrationRunner.checkReadable(connection, PostgresSchema.migrations)
        } else {
            try PostgresMigrationRunner.migrate(connection, PostgresSchema.migrations, progress: progress)
        }
    }

    /// How long a PostgreSQL writer may sit idle inside a transaction before the server ends its
    /// session: the leader lease's default session timeout (`LeaderLease.Settings`).
    public static let idleInTransactionTimeoutMilliseconds = 3_000

    /// Moves WAL checkpoints off this connection: starts a `WALCheckpointer` on the same file (its own connection
    /// and thread) with this connection attached as its writer (so this connection starts the WAL over between
    /// two transactions), then turns this connection's automatic checkpoints off and sets its `journal_size_limit` to
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
            checkpointer.attachWriter(connection)
        } catch {
            checkpointer.stop()
            throw error
        }
        return checkpointer
    }

    // MARK: Ingest

    /// Writes every run, card and history entry `changes` names, as the engine now holds them,
    /// with each card's desired content at `now`. Call inside the delivery's transaction.
    public func save(_ rows: EngineRows, at now: UnixTime) throws {
        for run in rows.runs {
            try saveRun(run.state, slug: run.slug, released: run.released, jobs: run.jobs, at: now)
        }
        for summary in rows.history { try saveHistory(summary) }
        for arrival in rows.arrivals {
            try store.run(
                """
                INSERT INTO run_arrivals (hour, runs) VALUES (?, ?)
                ON CONFLICT (hour) DO UPDATE SET runs = excluded.runs
                """, [.integer(Int64(arrival.hour)), .integer(Int64(arrival.runs))])
        }
        if let gate = rows.gate {
            try store.run(
                """
                INSERT INTO dispatch_state (id, gate, updated_at) VALUES (1, ?, ?)
                ON CONFLICT (id) DO UPDATE SET gate = excluded.gate, updated_at = excluded.updated_at
                """,
                [.text(try json(gate)), .real(now)])
        }
        for alert in rows.alerts { try insert(alert, at: now) }
        for row in rows.sessions {
            try saveSession(
                StoredSession(
                    session: row.session, floor: row.floor, desired: row.desired.map(desiredJSON), updatedAt: now))
        }
        for widget in rows.widgets { try saveWidget(widget, at: now) }
    }

    // MARK: The door

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`): committed when it returns, rolled
    /// back when it throws. The one way the daemon writes (GRDB's `write { db in … }`).
    public func write<T>(_ body: (BridgeDatabase) throws -> T) throws -> T {
        try store.transaction { try body(self) }
    }

    /// Runs `body` in a read transaction: every query in it sees one snapshot, even while the
    /// daemon commits.
    public func read<T>(_ body: (BridgeDatabase) throws -> T) throws -> T {
        try store.readTransaction { try body(self) }
    }

    /// How long a write waits for another connection's lock before failing with `SQLITE_BUSY`.
    /// Nothing on PostgreSQL, whose writers wait for row locks rather than a file lock.
    public func setBusyTimeout(milliseconds: Int32) throws {
        guard case .sqlite(let connection) = store.engine else { return }
        try connection.setBusyTimeout(milliseconds: milliseconds)
    }

    /// Whether a write could start now: `/readyz`. SQLite takes the write lock and lets it go;
    /// PostgreSQL asks the server whether this session may write (a hot standby, or a primary
    /// demoted by a failover, answers that it may not, and a lost connection fails the query).
    public func canWrite() -> Bool {
        switch store.engine {
        case .sqlite(let connection):
            return (try? connection.execute("BEGIN IMMEDIATE; ROLLBACK;")) != nil
        case .postgres(let connection):
            let readOnly = try? connection.queryOne("SELECT current_setting('transaction_read_only')") {
                $0.string(0)
            }
            return readOnly == .some("off")
        }
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
        try loadEngine(
            configuration: EngineConfiguration(settings: settings, filter: filter), at: now,
            historyCapacity: historyCapacity)
    }

    /// The engine as storage holds it (`loadEngine(settings:filter:at:)`), made with the whole
    /// `configuration`, so nothing of it is patched in after loading.
    public func loadEngine(
        configuration: EngineConfiguration, at now: UnixTime, historyCapacity: Int = HistoryCache.defaultCapacity
    ) throws -> BridgeEngine {
        let settings = configuration.settings
        var engine = BridgeEngine(configuration: configuration, historyCapacity: historyCapacity)
        let runs = try store.query("SELECT state, slug FROM runs WHERE released = 0", []) { row in
            (row.string(0) ?? "", row.string(1) ?? "")
        }
        for (state, slug) in runs {
            engine.restore(run: try decode(RunState.self, state), slug: slug, released: false)
        }
        let cards = try store.query(
            "SELECT session, progress_floor FROM activities WHERE phase != 'ended'", []
        ) { row in (row.string(0) ?? "", row.string(1)) }
        // Ended cards whose activity the bridge is still to delete (`BridgeEngine.deletionDue`) or
        // that PushWard still holds for reuse (`BridgeEngine.isRetained`): those updated within
        // PushWard's retention, through the index of ended cards by update. The account holds 50
        // at most, so these are few whatever the history.
        let ended = try store.query(
            "SELECT session, progress_floor FROM activities WHERE phase = 'ended' AND updated_at >= ?",
            [.real(now - Double(ActivitySettings.retainedEndedTTL) - 86_400)]
        ) { row in (row.string(0) ?? "", row.string(1)) }
        let history = StoreHistory(self)
        for (text, floor) in cards + ended {
            let session = try decode(ActivitySession.self, text)
            if session.phase == .ended, BridgeEngine.deletionDue(session, settings: settings) == nil,
                !BridgeEngine.isRetained(session, at: now)
            {
                continue
            }
            engine.restore(session: session, floor: try floor.map { try decode(ProgressFloor.self, $0) })
            // A card's owner is in flight while the card is; read it should storage say otherwise.
            if let owner = session.owner, engine.runs[owner] == nil, let stored = try history.storedRun(owner) {
                engine.restore(run: stored.state, slug: stored.slug, released: stored.released)
            }
        }
        if let gate = try store.queryOne(
            "SELECT gate FROM dispatch_state WHERE id = 1", [], { $0.string(0) ?? "" })
        {
            engine.restore(gate: try decode(DispatchGate.self, gate))
        }
        // The budget planner's forecast: runs first seen per hour over the last 14 days.
        let hours = try store.query(
            "SELECT hour, runs FROM run_arrivals WHERE hour >= ?", [.integer(Int64((now - RunArrivals.window) / 3_600))]
        ) { row in (row.int(0) ?? 0, row.int(1) ?? 0) }
        for (hour, count) in hours { engine.restoreArrivals(hour: hour, runs: count) }
        for widget in try widgets() { engine.restore(widget: widget) }
        _ = engine.takeChanges()
        return engine
    }

    // MARK: Encoding

    /// The encoder of the JSON columns other than the run state; package-wide so the round-trip
    /// tests encode exactly as the store does.
    package static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    func json<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try decoder.decode(type, from: Data(text.utf8))
    }
}
