import Foundation

/// Brings a PostgreSQL database up to date with an append-only list of migrations, the way
/// `MigrationRunner` does for SQLite: version *i* is the 1-based index in the list, each pending
/// migration runs in its own transaction with the `schema_migrations` row that records it, and a
/// history that does not match this build (renamed, reordered, or migrated further by a newer
/// build) is refused before anything is written.
///
/// Several instances share one PostgreSQL database and usually start together (a deploy, a host
/// reboot), so the whole run holds a session advisory lock: the first instance migrates, the others
/// wait on the lock and then find nothing pending. Without it two instances would both see a
/// migration as pending, and the slower one would fail on `CREATE TABLE` (or, for a migration
/// that only inserts or updates rows, apply it twice).
public enum PostgresMigrationRunner {
    /// The advisory lock key for schema migrations: fixed, so every build and instance agrees on it,
    /// and unlikely to collide with another application's keys in a shared database ("pwbr" + "mig").
    public static let lockKey: Int64 = 0x7077_6272_006D_6967

    private static let createTableSQL = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version integer PRIMARY KEY,
            name text NOT NULL,
            applied_at double precision NOT NULL
        )
        """

    /// Applies the migrations in `migrations` that the database has not recorded yet.
    ///
    /// Running it again is a no-op. `waiting` is called once when another session holds the
    /// migration lock, before this one blocks on it, so a start that waits for another instance's
    /// long migration says so in its log; `progress` hears of each migration as it starts and once
    /// it is applied. The lock is released before returning, whether or not migrating succeeded.
    /// - Precondition: migration names are non-empty and unique.
    public static func migrate(
        _ connection: PostgresConnection, _ migrations: [Migration], waiting: (() -> Void)? = nil,
        progress: ((MigrationProgress) -> Void)? = nil
    ) throws(StoreOpenError) {
        precondition(migrations.allSatisfy { !$0.name.isEmpty }, "migration names must not be empty")
        precondition(Set(migrations.map(\.name)).count == migrations.count, "migration names must be unique")

        try mapErrors { try lock(connection, waiting: waiting) }
        defer { _ = try? connection.query("SELECT pg_advisory_unlock($1::bigint)", [.integer(lockKey)]) { _ in () } }

        try mapErrors { try connection.execute(createTableSQL) }
        let history = try mapErrors { try recorded(connection) }
        try mapErrors { try MigrationRunner.verify(history, against: migrations) }

        for (offset, migration) in migrations.enumerated().dropFirst(history.last?.version ?? 0) {
            let version = offset + 1
            let started = ContinuousClock.now
            progress?(MigrationProgress(name: migration.name, version: version, total: migrations.count, elapsed: nil))
            try mapErrors {
                try connection.transaction {
                    try connection.execute(migration.sql)
                    try connection.run(
                        "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                        [.int(version), .text(migration.name), .real(Date().timeIntervalSince1970)])
                }
            }
            if let progress {
                let elapsed = ContinuousClock.now - started
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
                progress(
                    MigrationProgress(name: migration.name, version: version, total: migrations.count, elapsed: seconds)
                )
            }
        }
    }

    /// Refuses, without writing anything, a database whose schema is not exactly this build's:
    /// for read-only connections (the CLI), which cannot migrate. Mirrors
    /// `MigrationRunner.checkReadable`.
    public static func checkReadable(_ connection: PostgresConnection, _ migrations: [Migration]) throws(StoreOpenError)
    {
        let hasTable = try mapErrors {
            try connection.queryOne("SELECT to_regclass('schema_migrations') IS NOT NULL") { $0.bool(0) ?? false }
        }
        let history = hasTable == true ? try mapErrors { try recorded(connection) } : []
        try mapErrors { try MigrationRunner.verify(history, against: migrations) }
        let highest = history.last?.version ?? 0
        if highest < migrations.count {
            throw .olderSchema(found: highest, known: migrations.count)
        }
    }

    /// Takes the migration lock, first without waiting so that a wait can be reported.
    private static func lock(_ connection: PostgresConnection, waiting: (() -> Void)?) throws {
        let taken = try connection.queryOne("SELECT pg_try_advisory_lock($1::bigint)", [.integer(lockKey)]) {
            $0.bool(0) ?? false
        }
        guard taken != true else { return }
        waiting?()
        _ = try connection.query("SELECT pg_advisory_lock($1::bigint)", [.integer(lockKey)]) { _ in () }
    }

    /// The recorded `(version, name)` pairs, in version order.
    private static func recorded(_ connection: PostgresConnection) throws -> [(version: Int, name: String)] {
        try connection.query("SELECT version, name FROM schema_migrations ORDER BY version") { row in
            (version: row.int(0) ?? 0, name: row.string(1) ?? "")
        }
    }

    /// Runs `body`, wrapping `PostgresError`s.
    private static func mapErrors<T>(_ body: () throws -> T) throws(StoreOpenError) -> T {
        do {
            return try body()
        } catch let error as StoreOpenError {
            throw error
        } catch let error as PostgresError {
            throw .postgres(error)
        } catch {
            // Unreachable: the bodies above throw only PostgresError; keep the text rather than trap.
            throw .postgres(PostgresError(sqlState: nil, message: String(describing: error)))
        }
    }
}
