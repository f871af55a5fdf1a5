import BridgeStore
import Foundation
import Testing

@Suite struct MigrationRunnerTests {
    let directory: TemporaryDirectory
    let path: String

    init() throws {
        directory = try TemporaryDirectory()
        path = directory.path("migrations.sqlite")
    }

    // Plain CREATE TABLE (no IF NOT EXISTS): running any of these twice would fail loudly.
    let first = Migration(name: "create runs", sql: "CREATE TABLE runs (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
    let second = Migration(
        name: "create jobs",
        sql: """
            CREATE TABLE jobs (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id));
            CREATE INDEX jobs_by_run ON jobs (run_id);
            """
    )
    let third = Migration(name: "add runs.status", sql: "ALTER TABLE runs ADD COLUMN status TEXT")

    private func recorded(_ db: SQLiteConnection) throws -> [String] {
        try db.query("SELECT version, name FROM schema_migrations ORDER BY version") { row in
            "\(row.int(0) ?? 0):\(row.string(1) ?? "")"
        }
    }

    private func appliedAt(_ db: SQLiteConnection) throws -> [Double] {
        try db.query("SELECT applied_at FROM schema_migrations ORDER BY version") { $0.double(0) ?? 0 }
    }

    @Test func migratingAnEmptyDatabaseAppliesAndRecordsEverything() throws {
        let db = try SQLiteConnection(path: path)
        let before = Date().timeIntervalSince1970
        try MigrationRunner.migrate(db, [first, second, third])
        #expect(try recorded(db) == ["1:create runs", "2:create jobs", "3:add runs.status"])
        #expect(try appliedAt(db).allSatisfy { $0 >= before - 1 && $0 <= Date().timeIntervalSince1970 + 1 })
        try db.run("INSERT INTO runs (id, name, status) VALUES (1, 'ci', 'queued')")
        try db.run("INSERT INTO jobs (run_id) VALUES (1)")
    }

    @Test func reopeningAndMigratingAgainIsANoOp() throws {
        var db = try SQLiteConnection(path: path)
        try MigrationRunner.migrate(db, [first, second, third])
        let stamps = try appliedAt(db)
        db.close()

        db = try SQLiteConnection(path: path)
        try MigrationRunner.migrate(db, [first, second, third])
        // Nothing to apply means no write lock is taken: it succeeds while another connection writes
        // (waiting for the lock would take the 5 s busy timeout and then fail).
        let other = try SQLiteConnection(path: path)
        let clock = ContinuousClock()
        let start = clock.now
        try other.transaction {
            try other.run("INSERT INTO runs (name) VALUES ('other')")
            try MigrationRunner.migrate(db, [first, second, third])
        }
        #expect(clock.now - start < .seconds(2))
        #expect(try recorded(db) == ["1:create runs", "2:create jobs", "3:add runs.status"])
        #expect(try appliedAt(db) == stamps)
    }

    @Test func aMigrationAddedLaterIsTheOnlyOneApplied() throws {
        var db = try SQLiteConnection(path: path)
        try MigrationRunner.migrate(db, [first, second])
        let stamps = try appliedAt(db)
        db.close()

        db = try SQLiteConnection(path: path)
        try MigrationRunner.migrate(db, [first, second, third])
        #expect(try recorded(db) == ["1:create runs", "2:create jobs", "3:add runs.status"])
        #expect(try appliedAt(db).prefix(2) == stamps[...])
        #expect(
            try db.query("SELECT name FROM pragma_table_info('runs') ORDER BY cid") { $0.string(0) }
                == ["id", "name", "status"])
    }

    @Test func aDatabaseFromANewerBuildIsRefused() throws {
        let db = try SQLiteConnection(path: path)
        try MigrationRunner.migrate(db, [first, second, third])

        let error = #expect(throws: StoreOpenError.self) { try MigrationRunner.migrate(db, [first, second]) }
        guard case .newerSchema(let found, let known) = error else {
            Issue.record("expected .newerSchema, got \(String(describing: error))")
            return
        }
        #expect(found == 3 && known == 2)
        let description = error?.description ?? ""
        #expect(description.contains("newer version of pushward-bridge"))
        #expect(description.contains("Upgrade pushward-bridge"))
        #expect(description.contains("`database`"))
        #expect(try recorded(db).count == 3)
    }

    @Test func aRenamedMigrationIsRefused() throws {
        let db = try SQLiteConnection(path: path)
        try MigrationRunner.migrate(db, [first, second])

        let renamed = Migration(name: "create jobs table", sql: second.sql)
        let error = #expect(throws: StoreOpenError.self) { try MigrationRunner.migrate(db, [first, renamed, third]) }
        guard case .migrationMismatch(let version, let recordedName, let expected) = error else {
            Issue.record("expected .migrationMismatch, got \(String(describing: error))")
            return
        }
        #expect(version == 2 && recordedName == "create jobs" && expected == "create jobs table")
        #expect(error?.description.contains("'create jobs'") == true)
        // Refused before anything was written: the third migration was not applied either.
        #expect(try recorded(db) == ["1:create runs", "2:create jobs"])
    }

    @Test func aReorderedMigrationIsRefused() throws {
        let db = try SQLiteConnection(path: path)
        try MigrationRunner.migrate(db, [first, second])
        let error = #expect(throws: StoreOpenError.self) { try MigrationRunner.migrate(db, [second, first]) }
        guard case .migrationMismatch(version: 1, recorded: "create runs", expected: "create jobs") = error else {
            Issue.record("expected a mismatch at version 1, got \(String(describing: error))")
            return
        }
    }

    @Test func aFailingMigrationLeavesNoTrace() throws {
        let db = try SQLiteConnection(path: path)
        let broken = Migration(name: "broken", sql: "CREATE TABLE half (x); CREATE TABLE oops (")
        let error = #expect(throws: StoreOpenError.self) { try MigrationRunner.migrate(db, [first, broken, third]) }
        guard case .sqlite(let sqliteError) = error else {
            Issue.record("expected .sqlite, got \(String(describing: error))")
            return
        }
        #expect(sqliteError.sql == broken.sql)
        #expect(try recorded(db) == ["1:create runs"])
        #expect(try db.queryOne("SELECT count(*) FROM sqlite_schema WHERE name = 'half'") { $0.int(0) } == 0)
        #expect(!db.isInTransaction)
    }

    // MARK: - Read-only opens

    @Test func aReadOnlyOpenAcceptsAnUpToDateDatabase() throws {
        let writer = try SQLiteConnection(path: path)
        try MigrationRunner.migrate(writer, [first, second, third])
        let reader = try SQLiteConnection(path: path, mode: .readOnly)
        try MigrationRunner.checkReadable(reader, [first, second, third])
    }

    @Test func aReadOnlyOpenRefusesADatabaseItCannotMigrate() throws {
        let writer = try SQLiteConnection(path: path)
        let reader = try SQLiteConnection(path: path, mode: .readOnly)

        let never = #expect(throws: StoreOpenError.self) { try MigrationRunner.checkReadable(reader, [first]) }
        guard case .olderSchema(found: 0, known: 1) = never else {
            Issue.record("expected .olderSchema(0, 1), got \(String(describing: never))")
            return
        }

        try MigrationRunner.migrate(writer, [first])
        let behind = #expect(throws: StoreOpenError.self) {
            try MigrationRunner.checkReadable(reader, [first, second])
        }
        guard case .olderSchema(found: 1, known: 2) = behind else {
            Issue.record("expected .olderSchema(1, 2), got \(String(describing: behind))")
            return
        }
        #expect(behind?.description.contains("pushward-bridge serve") == true)

        try MigrationRunner.migrate(writer, [first, second, third])
        let ahead = #expect(throws: StoreOpenError.self) { try MigrationRunner.checkReadable(reader, [first, second]) }
        guard case .newerSchema(found: 3, known: 2) = ahead else {
            Issue.record("expected .newerSchema(3, 2), got \(String(describing: ahead))")
            return
        }
    }
}
