import BridgeStore
import Foundation
import Testing

/// A fresh directory per test, removed when the test's suite instance is released.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("bridge-store-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// The permission bits of the file at `path` (e.g. `0o600`).
func permissions(of path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

@Suite struct SQLiteConnectionTests {
    let directory: TemporaryDirectory
    let path: String

    init() throws {
        directory = try TemporaryDirectory()
        path = directory.path("test.sqlite")
    }

    private struct Boom: Error {}

    private func count(_ db: SQLiteConnection, _ table: String = "t") throws -> Int? {
        try db.queryOne("SELECT count(*) FROM \(table)") { $0.int(0) ?? 0 }
    }

    // MARK: - Values

    @Test func everyValueTypeRoundTrips() throws {
        let db = try SQLiteConnection(path: path)
        // No declared type: no affinity, so every value keeps its storage class.
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v)")
        let megabyte = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
        let values: [SQLiteValue] = [
            .null,
            .integer(.max),
            .integer(.min),
            0,
            .real(3.25),
            .real(-1e300),
            .text(#"It's "quoted" — 🚀👩‍👩‍👧 ünïcödé"#),
            "",
            .text("nul\u{0}inside"),
            .blob(megabyte),
            .blob(Data()),
            true,
        ]
        for value in values {
            try db.run("INSERT INTO t (v) VALUES (?)", [value])
        }
        let readBack = try db.query("SELECT v FROM t ORDER BY id") { $0.value(0) }
        #expect(readBack.count == values.count)
        for (read, written) in zip(readBack, values) {
            #expect(read == written, "\(written)")
        }
    }

    @Test func typedAccessorsMapNullToNil() throws {
        let db = try SQLiteConnection(path: path)
        try db.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB)")
        try db.run(
            "INSERT INTO t VALUES (?, ?, ?, ?)",
            [.int(Int(Int64.max)), .double(2.5), .string("a'b 🚀"), .data(Data([0, 1, 2]))]
        )
        try db.run("INSERT INTO t VALUES (?, ?, ?, ?)", [.int(nil), .double(nil), .string(nil), .data(nil)])
        let rows = try db.query("SELECT i, r, s, b FROM t ORDER BY rowid") { row in
            (row.int(0), row.double(1), row.string(2), row.data(3), row.isNull(0), row.columnCount, row.name(2))
        }
        #expect(rows.count == 2)
        #expect(rows[0].0 == Int(Int64.max))
        #expect(rows[0].1 == 2.5)
        #expect(rows[0].2 == "a'b 🚀")
        #expect(rows[0].3 == Data([0, 1, 2]))
        #expect(rows[0].4 == false)
        #expect(rows[0].5 == 4)
        #expect(rows[0].6 == "s")
        #expect(rows[1].0 == nil && rows[1].1 == nil && rows[1].2 == nil && rows[1].3 == nil)
        #expect(rows[1].4 == true)
    }

    /// The SQLITE_STATIC trap: Swift lends a string's bytes only for the duration of the bind call (small
    /// strings even live in a stack copy), so SQLite must copy them before the statement is stepped.
    @Test func stringsFromTemporariesReadBackIntact() throws {
        let db = try SQLiteConnection(path: path)
        try db.execute("CREATE TABLE t (a TEXT, b TEXT, c TEXT, d TEXT)")
        func makeText(_ seed: Int, long: Bool) -> String {
            long ? String(repeating: "payload-\(seed)-", count: 40) : "s\(seed)"
        }
        var expected: [[String]] = []
        for seed in 0..<100 {
            let arguments: [SQLiteValue] = [
                .text(makeText(seed, long: false)),
                .string(makeText(seed + 1000, long: true)),
                .text(String(makeText(seed + 2000, long: false).reversed())),
                .text("\(makeText(seed, long: false)) ✓"),
            ]
            try db.run("INSERT INTO t VALUES (?, ?, ?, ?)", arguments)
            expected.append(
                arguments.map { value in
                    guard case .text(let text) = value else { return "" }
                    return text
                })
        }
        let rows = try db.query("SELECT a, b, c, d FROM t ORDER BY rowid") { row in
            (0..<4).map { row.string($0) ?? "<null>" }
        }
        #expect(rows.count == expected.count)
        let corrupted = zip(rows, expected).filter { $0 != $1 }
        #expect(corrupted.isEmpty, "\(corrupted.count) corrupted rows, first: \(String(describing: corrupted.first))")
    }

    // MARK: - File and pragmas

    @Test func newDatabaseFileAndItsWALFilesAreOwnerOnly() throws {
        let db = try SQLiteConnection(path: path)
        #expect(try permissions(of: path) == 0o600)
        try db.execute("CREATE TABLE t (x)")
        try db.run("INSERT INTO t VALUES (1)")
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(try permissions(of: path + "-wal") == 0o600)
        #expect(try permissions(of: path + "-shm") == 0o600)
    }

    /// An existing file keeps its mode, and SQLite gives the -wal/-shm files that same mode.
    @Test func existingFileKeepsItsModeAndWALFilesFollowIt() throws {
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o640]))
        let db = try SQLiteConnection(path: path)
        try db.execute("CREATE TABLE t (x)")
        #expect(try permissions(of: path) == 0o640)
        #expect(try permissions(of: path + "-wal") == 0o640)
        #expect(try permissions(of: path + "-shm") == 0o640)
    }

    @Test func readWriteConnectionsUseWALAndTheConfiguredPragmas() throws {
        let db = try SQLiteConnection(path: path)
        #expect(try db.queryOne("PRAGMA journal_mode") { $0.string(0) } == "wal")
        #expect(try db.queryOne("PRAGMA synchronous") { $0.int(0) } == 1)  // NORMAL
        #expect(try db.queryOne("PRAGMA foreign_keys") { $0.int(0) } == 1)
        #expect(try db.queryOne("PRAGMA busy_timeout") { $0.int(0) } == 5000)

        let reader = try SQLiteConnection(path: path, mode: .readOnly)
        #expect(try reader.queryOne("PRAGMA busy_timeout") { $0.int(0) } == 5000)
        #expect(try reader.queryOne("PRAGMA journal_mode") { $0.string(0) } == "wal")
    }

    @Test func creatingInAMissingDirectoryFailsNamingThePath() throws {
        let missing = directory.path("no-such-dir/db.sqlite")
        let error = #expect(throws: SQLiteError.self) { try SQLiteConnection(path: missing) }
        #expect(error?.code == 14)  // SQLITE_CANTOPEN
        #expect(error?.description.contains(missing) == true)
        #expect(error?.description.contains("No such file or directory") == true)
    }

    @Test func openingAMissingFileReadOnlyFailsClearly() throws {
        let error = #expect(throws: SQLiteError.self) { try SQLiteConnection(path: path, mode: .readOnly) }
        #expect(error?.code == 14)  // SQLITE_CANTOPEN
        #expect(error?.description.contains(path) == true)
        #expect(error?.description.contains("read-only") == true)
        #expect(error?.description.contains("No such file or directory") == true)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    // MARK: - Transactions

    @Test func transactionCommitsItsResult() throws {
        let db = try SQLiteConnection(path: path)
        try db.execute("CREATE TABLE t (x INTEGER)")
        let value = try db.transaction {
            #expect(db.isInTransaction)
            try db.run("INSERT INTO t VALUES (1)")
            try db.run("INSERT INTO t VALUES (2)")
            return "done"
        }
        #expect(value == "done")
        #expect(!db.isInTransaction)
        #expect(try count(db) == 2)
        db.close()
        #expect(try count(SQLiteConnection(path: path)) == 2)
    }

    @Test func transactionRollsBackAndRethrowsTheOriginalError() throws {
        let db = try SQLiteConnection(path: path)
        try db.execute("CREATE TABLE t (x INTEGER)")
        #expect(throws: Boom.self) {
            try db.transaction {
                try db.run("INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        #expect(!db.isInTransaction)
        #expect(try count(db) == 0)

        // The connection stays usable for the next transaction.
        try db.transaction { try db.run("INSERT INTO t VALUES (3)") }
        #expect(try count(db) == 1)
    }

    @Test func constraintViolationCarriesCodeMessageAndSQL() throws {
        let db = try SQLiteConnection(path: path)
        try db.execute("CREATE TABLE t (x INTEGER NOT NULL UNIQUE)")
        let sql = "INSERT INTO t (x) VALUES (?)"
        try db.run(sql, [1])
        let error = #expect(throws: SQLiteError.self) {
            try db.transaction {
                try db.run(sql, [2])
                try db.run(sql, [1])
            }
        }
        #expect(error?.code == 19)  // SQLITE_CONSTRAINT
        #expect(error?.extendedCode == 2067)  // SQLITE_CONSTRAINT_UNIQUE
        #expect(error?.isConstraintViolation == true)
        #expect(error?.isBusy == false)
        #expect(error?.sql == sql)
        #expect(error?.message.contains("UNIQUE constraint failed: t.x") == true)
        #expect(error?.description.contains(sql) == true)
        #expect(try count(db) == 1)  // the 2 went with the rollback

        let notNull = #expect(throws: SQLiteError.self) { try db.run(sql, [.null]) }
        #expect(notNull?.extendedCode == 1299)  // SQLITE_CONSTRAINT_NOTNULL
    }

    @Test func foreignKeysAreEnforced() throws {
        let db = try SQLiteConnection(path: path)
        try db.execute(
            """
            CREATE TABLE parent (id INTEGER PRIMARY KEY);
            CREATE TABLE child (parent_id INTEGER NOT NULL REFERENCES parent(id));
            """)
        let error = #expect(throws: SQLiteError.self) { try db.run("INSERT INTO child VALUES (42)") }
        #expect(error?.extendedCode == 787)  // SQLITE_CONSTRAINT_FOREIGNKEY
    }

    // MARK: - Readers and writers

    @Test func readOnlyConnectionReadsCommittedRowsWhileAWriteTransactionIsOpen() throws {
        let writer = try SQLiteConnection(path: path)
        try writer.execute("CREATE TABLE t (x INTEGER)")
        try writer.run("INSERT INTO t VALUES (1)")
        let reader = try SQLiteConnection(path: path, mode: .readOnly)

        let clock = ContinuousClock()
        try writer.transaction {
            try writer.run("INSERT INTO t VALUES (2)")
            let start = clock.now
            let seen = try reader.query("SELECT x FROM t ORDER BY x") { $0.int(0) }
            #expect(seen == [1])
            // A reader blocked by the writer would wait out the 5 s busy timeout first.
            #expect(clock.now - start < .seconds(2))
        }
        #expect(try reader.query("SELECT x FROM t ORDER BY x") { $0.int(0) } == [1, 2])

        let error = #expect(throws: SQLiteError.self) { try reader.run("INSERT INTO t VALUES (3)") }
        #expect(error?.code == 8)  // SQLITE_READONLY
    }

    /// Carries a connection to the thread that holds its lock.
    private final class LockHolder: @unchecked Sendable {
        let connection: SQLiteConnection
        let taken = DispatchSemaphore(value: 0)
        init(_ connection: SQLiteConnection) { self.connection = connection }
    }

    @Test func fineLockPollingWaitsOutABriefLockAndCommits() throws {
        let writer = try SQLiteConnection(path: path)
        try writer.execute("CREATE TABLE t (x INTEGER)")
        try writer.pollForLocksFinely()
        let holder = LockHolder(try SQLiteConnection(path: path))
        let released = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? holder.connection.execute("BEGIN EXCLUSIVE")
            holder.taken.signal()
            usleep(50_000)
            try? holder.connection.execute("INSERT INTO t VALUES (1); COMMIT")
            released.signal()
        }
        #expect(holder.taken.wait(timeout: .now() + 10) == .success)
        // Busy at first; the handler retries until the other connection commits.
        try writer.run("INSERT INTO t VALUES (2)")
        #expect(released.wait(timeout: .now() + 10) == .success)
        #expect(try writer.query("SELECT x FROM t ORDER BY x") { $0.int(0) } == [1, 2])
    }

    @Test func fineLockPollingStillGivesUpAfterTheBusyTimeout() throws {
        let writer = try SQLiteConnection(path: path)
        try writer.execute("CREATE TABLE t (x INTEGER)")
        try writer.pollForLocksFinely()
        let blocker = try SQLiteConnection(path: path)
        try blocker.execute("BEGIN EXCLUSIVE")
        defer { try? blocker.execute("ROLLBACK") }
        let clock = ContinuousClock()
        let start = clock.now
        let error = #expect(throws: SQLiteError.self) { try writer.run("INSERT INTO t VALUES (1)") }
        #expect(error?.code == 5)  // SQLITE_BUSY
        // It waited about the busy timeout (5 s), not forever and not at once.
        #expect(clock.now - start >= .milliseconds(Int(SQLiteConnection.busyTimeoutMilliseconds) - 100))
    }

    @Test func readOnlyConnectionOpensAfterTheWriterClosed() throws {
        let writer = try SQLiteConnection(path: path)
        try writer.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (7);")
        writer.close()
        let reader = try SQLiteConnection(path: path, mode: .readOnly)
        #expect(try reader.readTransaction { try reader.query("SELECT x FROM t") { $0.int(0) } } == [7])
    }

    // MARK: - Statements

    @Test func cachedStatementsRebindAndReportChanges() throws {
        let db = try SQLiteConnection(path: path)
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        for name in ["a", "b", "c"] {
            try db.run("INSERT INTO t (name) VALUES (?)", [.text(name)])
        }
        #expect(db.lastInsertRowID == 3)
        try db.run("UPDATE t SET name = upper(name) WHERE id >= ?", [2])
        #expect(db.changes == 2)
        #expect(try db.queryOne("SELECT name FROM t WHERE id = ?", [2]) { $0.string(0) } == "B")
        #expect(try db.queryOne("SELECT name FROM t WHERE id = ?", [9]) { $0.string(0) } == nil)
        #expect(try db.queryOne("SELECT name FROM t WHERE id = ?", [1]) { $0.string(0) } == "a")
    }

    @Test func theSameQueryCanRunInsideItsOwnRowClosure() throws {
        let db = try SQLiteConnection(path: path)
        try db.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2);")
        let sql = "SELECT x FROM t WHERE x >= ? ORDER BY x"
        let pairs = try db.query(sql, [1]) { outer in
            try db.query(sql, [.int(outer.int(0))]) { inner in "\(outer.int(0) ?? 0)\(inner.int(0) ?? 0)" }
        }
        #expect(pairs == [["11", "12"], ["22"]])
    }

    @Test func theDatabaseFileSyncsThroughTheConnectionAndOneWithoutAFileSaysSo() throws {
        let db = try SQLiteConnection(path: path)
        try db.execute("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
        _ = try db.checkpoint(.passive)
        try db.syncDatabaseFile()
        #expect(try count(db) == 1)  // the connection's own descriptor, so SQLite's locks are untouched

        let memory = try SQLiteConnection(path: ":memory:")
        let noFile = #expect(throws: SQLiteError.self) { try memory.syncDatabaseFile() }
        #expect(noFile?.message.contains("no database file") == true)

        db.close()
        let closed = #expect(throws: SQLiteError.self) { try db.syncDatabaseFile() }
        #expect(closed?.code == 21)
        #expect(closed?.message.contains("closed") == true)
    }

    @Test func misuseIsReportedWithTheSQL() throws {
        let db = try SQLiteConnection(path: path)
        try db.execute("CREATE TABLE t (x)")

        let twoStatements = "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)"
        let multiple = #expect(throws: SQLiteError.self) { try db.run(twoStatements) }
        #expect(multiple?.code == 21)  // SQLITE_MISUSE
        #expect(multiple?.sql == twoStatements)
        #expect(try count(db) == 0)
        try db.run("INSERT INTO t VALUES (1); -- a trailing comment is fine")

        let arity = #expect(throws: SQLiteError.self) { try db.run("INSERT INTO t VALUES (?)", [1, 2]) }
        #expect(arity?.code == 25)  // SQLITE_RANGE

        let syntax = #expect(throws: SQLiteError.self) { try db.run("INSERT INTO nowhere VALUES (1)") }
        #expect(syntax?.code == 1)
        #expect(syntax?.message.contains("no such table: nowhere") == true)

        let script = #expect(throws: SQLiteError.self) { try db.execute("SELECT 1; SELEC 2") }
        #expect(script?.message.contains("syntax error") == true)
        #expect(script?.sql == "SELECT 1; SELEC 2")

        db.close()
        db.close()
        let closed = #expect(throws: SQLiteError.self) { try count(db) }
        #expect(closed?.code == 21)
        #expect(db.changes == 0)
    }
}
