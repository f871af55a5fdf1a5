import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// `PostgresMigrationRunner` against a real PostgreSQL: in-order application, refusal of a history
/// that does not match, rollback of a failing migration, and instances starting together.
@Suite struct PostgresMigrationRunnerTests {
    let uri: String

    init() throws {
        uri = try PostgresServer.shared().makeDatabase()
    }

    static let migrations = [
        Migration(name: "create runs", sql: "CREATE TABLE runs (id bigint PRIMARY KEY, name text NOT NULL)"),
        Migration(
            name: "add runs.branch and seed",
            sql: "ALTER TABLE runs ADD COLUMN branch text; INSERT INTO runs VALUES (1, 'seed', 'main')"),
    ]

    private func history(_ db: PostgresConnection) throws -> [String] {
        try db.query("SELECT name FROM schema_migrations ORDER BY version") { $0.string(0) ?? "" }
    }

    @Test func appliesEachMigrationOnceInOrderAndReportsProgress() throws {
        let db = try PostgresConnection(uri: uri)
        var reports: [MigrationProgress] = []
        try PostgresMigrationRunner.migrate(db, Self.migrations, progress: { reports.append($0) })
        #expect(try history(db) == Self.migrations.map(\.name))
        #expect(reports.map(\.version) == [1, 1, 2, 2])
        #expect(reports.map { $0.elapsed == nil } == [true, false, true, false])

        // Again: nothing pending, nothing reported, the seed row not inserted twice.
        reports = []
        try PostgresMigrationRunner.migrate(db, Self.migrations, progress: { reports.append($0) })
        #expect(reports.isEmpty)
        #expect(try db.queryOne("SELECT count(*) FROM runs") { $0.int(0) } == 1)

        // A later build appends one: only that one runs.
        let more = Self.migrations + [Migration(name: "index names", sql: "CREATE INDEX runs_by_name ON runs (name)")]
        try PostgresMigrationRunner.migrate(db, more, progress: { reports.append($0) })
        #expect(reports.map(\.name) == ["index names", "index names"])
        #expect(try history(db) == more.map(\.name))
    }

    @Test func refusesADatabaseANewerBuildMigrated() throws {
        let db = try PostgresConnection(uri: uri)
        try PostgresMigrationRunner.migrate(db, Self.migrations)
        #expect {
            try PostgresMigrationRunner.migrate(db, Array(Self.migrations.prefix(1)))
        } throws: { error in
            guard case .newerSchema(found: 2, known: 1) = error as? StoreOpenError else { return false }
            return "\(error)".contains("newer version of pushward-bridge")
        }
    }

    @Test func refusesARenamedMigrationBeforeApplyingAnything() throws {
        let db = try PostgresConnection(uri: uri)
        try PostgresMigrationRunner.migrate(db, Array(Self.migrations.prefix(1)))
        let renamed = [
            Migration(name: "create the runs table", sql: Self.migrations[0].sql), Self.migrations[1],
        ]
        #expect {
            try PostgresMigrationRunner.migrate(db, renamed)
        } throws: { error in
            guard
                case .migrationMismatch(version: 1, recorded: "create runs", expected: "create the runs table") =
                    error as? StoreOpenError
            else { return false }
            return true
        }
        // Migration 2 was not applied behind the refusal.
        #expect(try history(db) == ["create runs"])
        #expect(try db.queryOne("SELECT count(*) FROM runs") { $0.int(0) } == 0)
    }

    @Test func aFailingMigrationRollsBackAloneAndSaysWhy() throws {
        let db = try PostgresConnection(uri: uri)
        let broken =
            Self.migrations + [
                Migration(
                    name: "half done", sql: "CREATE TABLE jobs (id bigint); INSERT INTO missing_table VALUES (1)")
            ]
        #expect {
            try PostgresMigrationRunner.migrate(db, broken)
        } throws: { error in
            guard case .postgres(let postgres) = error as? StoreOpenError else { return false }
            return postgres.sqlState == "42P01" && "\(error)".contains("missing_table")
        }
        #expect(try history(db) == Self.migrations.map(\.name))
        // The failed migration's first statement went with it.
        #expect(try db.queryOne("SELECT to_regclass('jobs') IS NULL") { $0.bool(0) } == true)
        // The lock was let go: another session takes it without waiting.
        let other = try PostgresConnection(uri: uri)
        #expect(
            try other.queryOne("SELECT pg_try_advisory_lock($1::bigint)", [.integer(PostgresMigrationRunner.lockKey)]) {
                $0.bool(0)
            } == true)
    }

    /// Three instances starting at once: every one succeeds, each migration runs exactly once (a
    /// second run of the first would fail on `CREATE TABLE`, of the second insert a second seed
    /// row), and the ones that found the lock taken said they were waiting.
    @Test func instancesStartingTogetherMigrateOnce() throws {
        let slow =
            [Migration(name: "slow start", sql: "SELECT pg_sleep(0.4); CREATE TABLE started (at timestamptz)")]
            + Self.migrations
        let outcomes = Outcomes()
        // Connected first, then released together from threads of their own (GCD's pool may run
        // them one after another on a loaded machine, and then nobody waits).
        let connections = try (0..<3).map { _ in try PostgresConnection(uri: uri) }
        let start = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        for db in connections {
            nonisolated(unsafe) let db = db
            Thread {
                start.wait()
                do {
                    var waited = false
                    var applied = 0
                    try PostgresMigrationRunner.migrate(
                        db, slow, waiting: { waited = true }, progress: { if $0.elapsed != nil { applied += 1 } })
                    outcomes.add(.success((waited, applied)))
                } catch {
                    outcomes.add(.failure(error))
                }
                done.signal()
            }.start()
        }
        for _ in connections { start.signal() }
        for _ in connections { done.wait() }
        let results = try outcomes.all.map { try $0.get() }
        #expect(results.count == 3)
        #expect(results.map(\.1).sorted() == [0, 0, 3])
        #expect(results.filter(\.0).count >= 1)
        let db = try PostgresConnection(uri: uri)
        #expect(try history(db) == slow.map(\.name))
        #expect(try db.queryOne("SELECT count(*) FROM runs") { $0.int(0) } == 1)
    }
}

/// What each concurrent migrator ended with, gathered from several threads.
private final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<(Bool, Int), any Error>] = []

    func add(_ result: Result<(Bool, Int), any Error>) { lock.withLock { results.append(result) } }
    var all: [Result<(Bool, Int), any Error>] { lock.withLock { results } }
}
