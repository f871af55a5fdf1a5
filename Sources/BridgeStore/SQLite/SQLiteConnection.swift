import CSQLite
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One SQLite database connection, with a cache of prepared statements.
///
/// The connection is opened with `SQLITE_OPEN_NOMUTEX`: SQLite does no locking of its own on it, so the
/// owner (the store actor on its serial queue, or a CLI command) must be the only one using it at a time.
/// That is why the type is deliberately not `Sendable`: hand it to one actor and keep it there, the way
/// GRDB serialises every access through one queue.
///
/// Read-write connections run in WAL mode with `synchronous=NORMAL` (durable across process crashes;
/// a power loss may lose the last transactions but never corrupts), enforce foreign keys, and wait up
/// to five seconds for a lock held by another connection before failing with `SQLITE_BUSY`. In WAL mode
/// readers never block the writer and the writer never blocks readers, so a read-only connection in
/// another process (the CLI, the status page) sees the last committed state while the daemon writes.
/// SQLite checkpoints the WAL into the database file inside whichever commit leaves it at 1000 pages or more;
/// a writer that must not pay for that hands it to a `WALCheckpointer` (`disableAutomaticCheckpoints()`).
///
/// File modes: a database file this initialiser creates is `0600`. SQLite's unix VFS gives the `-wal`
/// and `-shm` files it creates the same permission bits as the database file (it reads them with
/// `fstat` and applies them with `fchmod`, so the umask does not widen or narrow them); the tests pin
/// this down.
public final class SQLiteConnection {
    /// How to open the database file.
    public enum OpenMode: Sendable {
        /// Read and write; the file is created (mode `0600`) if it does not exist.
        case readWrite
        /// Read only; the file must already exist. Suitable while another process writes (WAL).
        case readOnly
    }

    /// The path the connection was opened with.
    public let path: String
    /// The mode the connection was opened with.
    public let mode: OpenMode

    /// The `sqlite3 *` handle; `nil` once closed.
    private var db: OpaquePointer?
    /// Prepared statements by SQL text. Unbounded on purpose: the SQL is a fixed set of literals in
    /// the code (values always go through parameters), so the cache stays as small as that set.
    private var statements: [String: OpaquePointer] = [:]

    /// Called with the SQL text of every statement this connection compiles (each distinct text once
    /// while it stays cached). Nil, and so free, unless a test sets it: the query-plan tests record
    /// what the read paths really run instead of keeping a list of SQL that could drift from the code.
    public var statementObserver: ((String) -> Void)?

    /// How long a statement waits for another connection's lock before failing with `SQLITE_BUSY`, unless
    /// the owner sets its own (`setBusyTimeout(milliseconds:)`).
    public static let busyTimeoutMilliseconds: Int32 = 5000

    /// Bytes SQLite holds on the heap across every connection of the process (page caches,
    /// prepared statements, schema): the part of the daemon's memory that is SQLite's.
    public static var processMemoryUsed: Int { Int(sqlite3_memory_used()) }

    /// This connection's wait for another connection's lock, in milliseconds.
    public private(set) var busyTimeout: Int32 = SQLiteConnection.busyTimeoutMilliseconds
    /// Set by `pollForLocksFinely()`: a new busy timeout keeps the fine polling.
    private var pollsForLocksFinely = false
    /// Runs before every write transaction's `BEGIN`, with this connection, outside any transaction:
    /// `WALCheckpointer.attachWriter` sets it so the writer itself can start the WAL over between two
    /// transactions. Not for anything that may fail a write: it cannot throw.
    var beforeWriteTransaction: ((SQLiteConnection) -> Void)?

    /// Opens (and for `.readWrite`, creates) the database at `path` and configures it.
    ///
    /// `":memory:"` opens a private in-memory database (no file, no WAL), which is handy in tests.
    public init(path: String, mode: OpenMode = .readWrite) throws(SQLiteError) {
        self.path = path
        self.mode = mode

        var flags = SQLITE_OPEN_NOMUTEX
        switch mode {
        case .readWrite:
            flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
            try Self.createPrivateFileIfMissing(at: path)
        case .readOnly:
            flags |= SQLITE_OPEN_READONLY
        }

        var handle: OpaquePointer?
        let result = sqlite3_open_v2(path, &handle, flags, nil)
        guard result == SQLITE_OK, let handle else {
            var error = SQLiteError(result: result, db: handle, sql: nil)
            let systemErrno = handle.map { sqlite3_system_errno($0) } ?? 0
            let reason = systemErrno == 0 ? "" : " (\(String(cString: strerror(systemErrno))))"
            error.message = "cannot open database '\(path)' \(mode.phrase): \(error.message)\(reason)"
            // sqlite3_open_v2 returns a handle even on failure (except out of memory); it must be closed.
            sqlite3_close_v2(handle)
            throw error
        }
        db = handle

        do {
            try configure()
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    // MARK: - Statements

    /// Runs one or more `;`-separated statements that take no parameters and return no rows
    /// (schema, pragmas, migrations). Not cached: use `run` for anything executed repeatedly.
    public func execute(_ sql: String) throws(SQLiteError) {
        let db = try openHandle(sql)
        var errorMessage: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(db, sql, nil, nil, &errorMessage)
        defer { sqlite3_free(errorMessage) }
        guard result == SQLITE_OK else {
            var error = SQLiteError(result: result, db: db, sql: sql)
            if let errorMessage {
                error.message = String(cString: errorMessage)
            }
            throw error
        }
    }

    /// Runs exactly one statement with positional parameters (`?`, `?NNN`, `:name` — all bound in order).
    ///
    /// Rows the statement produces (a `PRAGMA`, `RETURNING`) are stepped through and discarded; use
    /// `query` to read them.
    public func run(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) {
        let lease = try acquire(sql)
        defer { release(lease) }
        try bind(arguments, to: lease.statement, sql: sql)
        while true {
            let result = sqlite3_step(lease.statement)
            switch result {
            case SQLITE_DONE: return
            case SQLITE_ROW: continue
            default: throw SQLiteError(result: result, db: db, sql: sql)
            }
        }
    }

    /// Runs exactly one statement and maps every row with `row`.
    ///
    /// The `SQLiteRow` is only valid during the call to `row`. An error thrown by `row` stops the query
    /// and is rethrown unchanged.
    public func query<T>(
        _ sql: String,
        _ arguments: [SQLiteValue] = [],
        _ row: (SQLiteRow) throws -> T
    ) throws -> [T] {
        let lease = try acquire(sql)
        defer { release(lease) }
        try bind(arguments, to: lease.statement, sql: sql)
        let current = SQLiteRow(statement: lease.statement)
        var rows: [T] = []
        while true {
            let result = sqlite3_step(lease.statement)
            switch result {
            case SQLITE_ROW: rows.append(try row(current))
            case SQLITE_DONE: return rows
            default: throw SQLiteError(result: result, db: db, sql: sql)
            }
        }
    }

    /// Runs exactly one statement and maps its first row; `nil` when there is no row. Later rows are
    /// never computed.
    public func queryOne<T>(
        _ sql: String,
        _ arguments: [SQLiteValue] = [],
        _ row: (SQLiteRow) throws -> T
    ) throws -> T? {
        let lease = try acquire(sql)
        defer { release(lease) }
        try bind(arguments, to: lease.statement, sql: sql)
        let result = sqlite3_step(lease.statement)
        switch result {
        case SQLITE_ROW: return try row(SQLiteRow(statement: lease.statement))
        case SQLITE_DONE: return nil
        default: throw SQLiteError(result: result, db: db, sql: sql)
        }
    }

    /// The plan SQLite chooses for `sql` (`EXPLAIN QUERY PLAN`), one line per step, indented two
    /// spaces per level under its parent. Its parameters are left unbound, so they read as NULL:
    /// the plan depends on the SQL and the schema (and `ANALYZE` figures if any), not on the values.
    public func queryPlan(of sql: String) throws(SQLiteError) -> [String] {
        let explained = "EXPLAIN QUERY PLAN " + sql
        let statement = try prepare(explained, persistent: false)
        defer { sqlite3_finalize(statement) }
        let row = SQLiteRow(statement: statement)
        var depth: [Int: Int] = [0: -1]
        var lines: [String] = []
        while true {
            let result = sqlite3_step(statement)
            guard result == SQLITE_ROW else {
                if result == SQLITE_DONE { return lines }
                throw SQLiteError(result: result, db: db, sql: explained)
            }
            let level = (depth[row.int(1) ?? 0] ?? -1) + 1
            depth[row.int(0) ?? 0] = level
            lines.append(String(repeating: "  ", count: level) + (row.string(3) ?? ""))
        }
    }

    // MARK: - Transactions

    /// Runs `body` in a write transaction: `BEGIN IMMEDIATE`, then `COMMIT`, or `ROLLBACK` if `body`
    /// (or the commit) throws, in which case that original error is rethrown.
    ///
    /// `IMMEDIATE` takes the write lock up front, so a conflicting writer waits on the busy timeout at
    /// `BEGIN` instead of failing halfway through with an upgrade deadlock. Transactions do not nest:
    /// calling this inside another transaction is a programming error and traps.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if !isInTransaction { beforeWriteTransaction?(self) }
        return try withTransaction(begin: "BEGIN IMMEDIATE", body)
    }

    /// Runs `body` in a read transaction (`BEGIN DEFERRED`), so several queries see one consistent
    /// snapshot even while another connection commits. Works on read-only connections. Does not nest.
    public func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try withTransaction(begin: "BEGIN DEFERRED", body)
    }

    /// Whether a transaction is open on this connection (SQLite is not in autocommit mode).
    public var isInTransaction: Bool {
        guard let db else { return false }
        return sqlite3_get_autocommit(db) == 0
    }

    // MARK: - State

    /// Rows changed by the most recent `INSERT`, `UPDATE` or `DELETE` on this connection (0 when closed).
    public var changes: Int {
        guard let db else { return 0 }
        return Int(sqlite3_changes64(db))
    }

    /// The rowid of the most recent successful `INSERT` on this connection; 0 if there was none.
    public var lastInsertRowID: Int64 {
        guard let db else { return 0 }
        return sqlite3_last_insert_rowid(db)
    }

    // MARK: - WAL checkpoints

    /// How a checkpoint treats the other connections (`SQLITE_CHECKPOINT_*`).
    public enum CheckpointMode: Sendable {
        /// Copies as many frames as it can without waiting for the writer or any reader.
        case passive
        /// Waits (busy handler) for the write lock and for readers of older snapshots, then copies every frame.
        case full
        /// `full`, then waits (busy handler) until no reader uses the WAL, so the next write starts it over.
        case restart
        /// `restart`, then truncates the WAL file to zero bytes.
        case truncate
    }

    /// What one checkpoint reported.
    public struct CheckpointResult: Sendable, Equatable {
        /// False when SQLite answered `SQLITE_BUSY`: another connection was checkpointing (nothing ran), or a
        /// `full`, `restart` or `truncate` checkpoint did not get the write lock or outwait the readers in time
        /// (it then copied what a passive one could).
        public var completed: Bool
        /// Frames in the WAL; `nil` when nothing ran or the database is not in WAL mode.
        public var walFrames: Int?
        /// Frames of the WAL now copied into the database file; `nil` as for `walFrames`.
        public var checkpointedFrames: Int?

        public init(completed: Bool, walFrames: Int?, checkpointedFrames: Int?) {
            self.completed = completed
            self.walFrames = walFrames
            self.checkpointedFrames = checkpointedFrames
        }
    }

    /// Runs one checkpoint of the main database (`sqlite3_wal_checkpoint_v2`). `SQLITE_BUSY` is an answer, not
    /// an error (see `CheckpointResult.completed`); anything else throws. The non-passive modes wait through
    /// this connection's busy handler, holding the write lock while they wait for readers.
    public func checkpoint(_ mode: CheckpointMode) throws(SQLiteError) -> CheckpointResult {
        let db = try openHandle(nil)
        var walFrames: Int32 = -1
        var checkpointedFrames: Int32 = -1
        let result = sqlite3_wal_checkpoint_v2(db, nil, mode.code, &walFrames, &checkpointedFrames)
        guard result == SQLITE_OK || result == SQLITE_BUSY else {
            var error = SQLiteError(result: result, db: db, sql: nil)
            error.message = "\(mode) checkpoint of '\(path)' failed: \(error.message)"
            throw error
        }
        return CheckpointResult(
            completed: result == SQLITE_OK,
            walFrames: walFrames < 0 ? nil : Int(walFrames),
            checkpointedFrames: checkpointedFrames < 0 ? nil : Int(checkpointedFrames)
        )
    }

    /// Flushes the main database file to disk (its VFS's `xSync`, `fdatasync` on Linux), through this
    /// connection's own descriptor (`SQLITE_FCNTL_FILE_POINTER`).
    ///
    /// SQLite syncs the database file only after a checkpoint that finds no newer frame in the WAL when it
    /// ends. Under a writer that commits continuously, passive checkpoints never do, so everything they copy
    /// stays dirty in the page cache until the checkpoint that starts the WAL over, which then syncs all of it
    /// while the writer waits. A checkpointer that calls this after each passive checkpoint leaves that one
    /// only its own few pages to sync. Opening a second descriptor instead would be a trap: closing any
    /// descriptor of the file drops every POSIX lock the process holds on it, SQLite's included.
    public func syncDatabaseFile() throws(SQLiteError) {
        let db = try openHandle(nil)
        var file: UnsafeMutablePointer<sqlite3_file>?
        let found = sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file)
        guard found == SQLITE_OK, let file, let methods = file.pointee.pMethods, let sync = methods.pointee.xSync
        else {
            throw .misuse("'\(path)' has no database file to sync")
        }
        let result = sync(file, SQLITE_SYNC_NORMAL)
        guard result == SQLITE_OK else {
            var error = SQLiteError(result: result, db: db, sql: nil)
            error.message = "syncing the database file '\(path)' failed: \(error.message)"
            throw error
        }
    }

    /// Turns off SQLite's automatic checkpoint on this connection (`sqlite3_wal_autocheckpoint(db, 0)`).
    ///
    /// By default a commit that leaves the WAL at 1000 pages or more runs a passive checkpoint before it returns,
    /// on the committing thread: it copies the WAL into the database file and syncs it. With this off, the WAL
    /// grows until some connection checkpoints it: pair it with a `WALCheckpointer`. Affects this connection
    /// only; other connections keep their own setting.
    public func disableAutomaticCheckpoints() throws(SQLiteError) {
        let db = try openHandle(nil)
        let result = sqlite3_wal_autocheckpoint(db, 0)
        guard result == SQLITE_OK else { throw SQLiteError(result: result, db: db, sql: nil) }
    }

    /// Waits for a lock in short polls instead of SQLite's busy timeout, with the same total wait
    /// (`busyTimeoutMilliseconds`).
    ///
    /// SQLite's own handler sleeps 1, 2, 5, 10, 15, 20… ms between tries, so a writer that finds
    /// the lock held for 2 ms (a checkpointer starting the WAL over) waits 3 ms or more, and one that
    /// finds it held for 12 ms waits 18. This one polls every 0.2 ms for the first 20 ms, then every
    /// 2 ms: for the daemon's writer, whose every wait delays webhook answers.
    public func pollForLocksFinely() throws(SQLiteError) {
        pollsForLocksFinely = true
        try installBusyHandler()
    }

    /// Sets how long this connection waits for another connection's lock before failing with `SQLITE_BUSY`
    /// (at least 1 ms), keeping the fine polling if it is on. A test that holds the write lock for as long as its
    /// own steps take sets its writer's wait far past them, so the machine's speed cannot turn the wait into a
    /// failure.
    public func setBusyTimeout(milliseconds: Int32) throws(SQLiteError) {
        precondition(milliseconds >= 1, "a busy timeout of \(milliseconds) ms")
        busyTimeout = milliseconds
        try installBusyHandler()
    }

    /// SQLite's own busy handler with `busyTimeout`, or the fine one with the same total wait.
    private func installBusyHandler() throws(SQLiteError) {
        let db = try openHandle(nil)
        // Equivalent to PRAGMA busy_timeout, without parsing SQL.
        var result = sqlite3_busy_timeout(db, busyTimeout)
        if result == SQLITE_OK, pollsForLocksFinely {
            // The handler's context is the total wait itself, not a pointer to anything.
            result = sqlite3_busy_handler(
                db, finePollingBusyHandler, UnsafeMutableRawPointer(bitPattern: Int(busyTimeout)))
        }
        guard result == SQLITE_OK else { throw SQLiteError(result: result, db: db, sql: nil) }
    }

    /// The `sqlite3 *` handle, for the few calls this wrapper does not cover (a checkpointer's busy handler).
    /// Same rules as the connection: only its owner may use it, and never past `close()`.
    var unsafeHandle: OpaquePointer? { db }

    /// Finalizes cached statements and closes the database. Idempotent; an open transaction is rolled
    /// back. Any later call on this connection fails with `SQLITE_MISUSE`.
    public func close() {
        guard let db else { return }
        for statement in statements.values {
            sqlite3_finalize(statement)
        }
        statements.removeAll()
        // close_v2 rather than close: should a statement still be live, SQLite defers the close
        // instead of leaking the handle.
        sqlite3_close_v2(db)
        self.db = nil
    }
}

/// Not `Sendable`: the connection is opened `NOMUTEX` and must stay with the one actor or queue that
/// owns it.
@available(*, unavailable)
extension SQLiteConnection: Sendable {}

// MARK: - Private

extension SQLiteConnection {
    /// A prepared statement handed out for one use: `cached` ones are reset on release, the others
    /// finalized.
    private struct Lease {
        var statement: OpaquePointer
        var cached: Bool
    }

    private func configure() throws(SQLiteError) {
        let db = try openHandle(nil)
        try installBusyHandler()
        guard mode == .readWrite else { return }

        let journalModeSQL = "PRAGMA journal_mode = WAL"
        let lease = try acquire(journalModeSQL)
        defer { release(lease) }
        let result = sqlite3_step(lease.statement)
        guard result == SQLITE_ROW else { throw SQLiteError(result: result, db: db, sql: journalModeSQL) }
        let journalMode = SQLiteRow(statement: lease.statement).string(0)?.lowercased()
        // An in-memory database answers "memory"; a file that stays out of WAL (a file system without
        // shared memory support) would silently make every CLI read block the daemon, so refuse it.
        if journalMode != "wal" && !isInMemory {
            throw SQLiteError(
                code: SQLITE_ERROR,
                message: "could not switch '\(path)' to WAL journal mode (journal_mode is \(journalMode ?? "unknown"))",
                sql: journalModeSQL
            )
        }
        try execute("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON")
    }

    private var isInMemory: Bool { path == ":memory:" || path.isEmpty }

    /// The live handle, or a `SQLITE_MISUSE` error naming `sql` once the connection is closed.
    private func openHandle(_ sql: String?) throws(SQLiteError) -> OpaquePointer {
        guard let db else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "the connection to '\(path)' is closed", sql: sql)
        }
        return db
    }

    /// The cached statement for `sql`, or a fresh one when the cached one is mid-iteration (a query
    /// run again from inside its own row closure).
    private func acquire(_ sql: String) throws(SQLiteError) -> Lease {
        if let cached = statements[sql] {
            if sqlite3_stmt_busy(cached) == 0 {
                return Lease(statement: cached, cached: true)
            }
            return Lease(statement: try prepare(sql, persistent: false), cached: false)
        }
        let statement = try prepare(sql, persistent: true)
        statements[sql] = statement
        return Lease(statement: statement, cached: true)
    }

    /// Resets a cached statement and clears its bindings, so it holds no read snapshot and no copy of
    /// the last arguments; finalizes an uncached one.
    private func release(_ lease: Lease) {
        if lease.cached {
            sqlite3_reset(lease.statement)
            sqlite3_clear_bindings(lease.statement)
        } else {
            sqlite3_finalize(lease.statement)
        }
    }

    /// Compiles exactly one statement. Trailing SQL other than whitespace and comments is refused, since
    /// `sqlite3_prepare` would silently ignore it.
    private func prepare(_ sql: String, persistent: Bool) throws(SQLiteError) -> OpaquePointer {
        let db = try openHandle(sql)
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        var statement: OpaquePointer?
        var hasTrailingStatement = false
        let result = sql.withCString { text in
            var tail: UnsafePointer<CChar>?
            let result = sqlite3_prepare_v3(db, text, -1, flags, &statement, &tail)
            if result == SQLITE_OK, let tail, tail.pointee != 0 {
                // Compiling the rest tells comments apart from a second statement. A tail that fails
                // to compile (it may use a table the first statement creates) is a statement too.
                var next: OpaquePointer?
                hasTrailingStatement = sqlite3_prepare_v2(db, tail, -1, &next, nil) != SQLITE_OK || next != nil
                sqlite3_finalize(next)
            }
            return result
        }
        guard result == SQLITE_OK else {
            throw SQLiteError(result: result, db: db, sql: sql)
        }
        statementObserver?(sql)
        guard let statement else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "the SQL contains no statement", sql: sql)
        }
        guard !hasTrailingStatement else {
            sqlite3_finalize(statement)
            throw SQLiteError(
                code: SQLITE_MISUSE,
                message: "run and query take exactly one statement; use execute(_:) for several",
                sql: sql
            )
        }
        return statement
    }

    private func bind(_ arguments: [SQLiteValue], to statement: OpaquePointer, sql: String) throws(SQLiteError) {
        let parameterCount = Int(sqlite3_bind_parameter_count(statement))
        guard parameterCount == arguments.count else {
            throw SQLiteError(
                code: SQLITE_RANGE,
                message: "\(arguments.count) argument(s) given for \(parameterCount) parameter(s)",
                sql: sql
            )
        }
        for (offset, value) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .null:
                result = sqlite3_bind_null(statement, index)
            case .integer(let integer):
                result = sqlite3_bind_int64(statement, index, integer)
            case .real(let real):
                result = sqlite3_bind_double(statement, index, real)
            case .text(let text):
                result = Self.bindText(text, to: statement, at: index)
            case .blob(let data):
                result = data.withUnsafeBytes { bytes in
                    // A nil base address would bind NULL; an empty blob must stay an empty blob.
                    guard let base = bytes.baseAddress, !bytes.isEmpty else {
                        return sqlite3_bind_zeroblob(statement, index, 0)
                    }
                    return sqlite3_bind_blob64(statement, index, base, UInt64(bytes.count), csqlite_transient())
                }
            }
            guard result == SQLITE_OK else {
                throw SQLiteError(result: result, db: db, sql: sql)
            }
        }
    }

    /// Binds `text` with `SQLITE_TRANSIENT`: SQLite copies the bytes before returning, because the
    /// buffer Swift lends here is only valid for the duration of the closure (DESIGN.md, known traps).
    /// The explicit byte count keeps text with an embedded NUL whole.
    private static func bindText(_ text: String, to statement: OpaquePointer, at index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { utf8 in
            guard let base = utf8.baseAddress, !utf8.isEmpty else {
                // A nil pointer would bind NULL; bind a real empty string instead.
                return sqlite3_bind_text(statement, index, "", 0, csqlite_transient())
            }
            let characters = UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self)
            return sqlite3_bind_text64(
                statement, index, characters, UInt64(utf8.count), csqlite_transient(), UInt8(SQLITE_UTF8)
            )
        }
    }

    private func withTransaction<T>(begin: String, _ body: () throws -> T) throws -> T {
        precondition(!isInTransaction, "SQLiteConnection transactions do not nest ('\(path)')")
        try run(begin)
        let value: T
        do {
            value = try body()
        } catch {
            rollbackIfActive()
            throw error
        }
        do {
            try run("COMMIT")
        } catch {
            // A failed COMMIT (deferred foreign keys, SQLITE_BUSY) leaves the transaction open.
            rollbackIfActive()
            throw error
        }
        return value
    }

    /// Rolls back unless SQLite already did: some errors (I/O, disk full, busy during a write) end
    /// the transaction themselves, and a ROLLBACK then would only add a second, misleading error.
    private func rollbackIfActive() {
        guard let db, sqlite3_get_autocommit(db) == 0 else { return }
        sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
    }

    /// Creates the database file with mode `0600` if it does not exist yet, before SQLite opens it:
    /// SQLite itself would create it `0644` minus the umask, readable by every local user, and it
    /// holds the webhook history and activity content. An existing file keeps the mode its operator
    /// gave it.
    private static func createPrivateFileIfMissing(at path: String) throws(SQLiteError) {
        guard path != ":memory:", !path.isEmpty else { return }
        let descriptor = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o600)
        if descriptor < 0 {
            let code = errno
            if code == EEXIST { return }
            throw SQLiteError(
                code: SQLITE_CANTOPEN,
                message: "cannot create database file '\(path)': \(String(cString: strerror(code)))"
            )
        }
        // open() applies the umask; fchmod makes the mode exactly 0600 whatever the umask.
        fchmod(descriptor, 0o600)
        closeFileDescriptor(descriptor)
    }
}

extension SQLiteConnection.CheckpointMode {
    fileprivate var code: Int32 {
        switch self {
        case .passive: SQLITE_CHECKPOINT_PASSIVE
        case .full: SQLITE_CHECKPOINT_FULL
        case .restart: SQLITE_CHECKPOINT_RESTART
        case .truncate: SQLITE_CHECKPOINT_TRUNCATE
        }
    }
}

extension SQLiteConnection.OpenMode {
    fileprivate var phrase: String {
        switch self {
        case .readWrite: "read-write"
        case .readOnly: "read-only"
        }
    }
}

/// `close(2)`, out of reach of `SQLiteConnection.close()` which shadows it inside the class.
private func closeFileDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}

/// The busy handler of `pollForLocksFinely`: `count` is how many times SQLite has called it for
/// this wait; `context` is the connection's busy timeout in milliseconds (as a pointer's bits).
/// 100 polls of 0.2 ms, then 2 ms polls until the busy timeout's total is spent.
private func finePollingBusyHandler(_ context: UnsafeMutableRawPointer?, _ count: Int32) -> Int32 {
    let finePolls: Int32 = 100
    if count < finePolls {
        usleep(200)
        return 1
    }
    let busyTimeout = Int32(truncatingIfNeeded: Int(bitPattern: context))
    let coarsePolls = (busyTimeout - 20) / 2
    guard count < finePolls + coarsePolls else { return 0 }
    usleep(2_000)
    return 1
}
