import Foundation

/// Brings a database up to date with an append-only list of migrations.
///
/// The version of migration *i* is its 1-based index in the list. Each pending migration runs in its
/// own `BEGIN IMMEDIATE` transaction together with the `schema_migrations` row that records it, so a
/// crash leaves the database either before or after that migration, never halfway. Versions already
/// recorded are checked by name first: a database that does not match this build's history, or that a
/// newer build has migrated further, is refused before anything is written.
public enum MigrationRunner {
    private static let createTableSQL = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            applied_at REAL NOT NULL
        )
        """

    /// Applies the migrations in `migrations` that `connection`'s database has not recorded yet.
    ///
    /// Running it again is a no-op. `applied_at` is recorded as seconds since 1970 (UTC). `progress`
    /// hears of each migration as it starts and once it is applied (with how long it took), so a
    /// daemon upgrading a large database can say so in its log; nothing is reported when nothing is
    /// pending.
    /// - Precondition: migration names are non-empty and unique.
    public static func migrate(
        _ connection: SQLiteConnection, _ migrations: [Migration], progress: ((MigrationProgress) -> Void)? = nil
    ) throws(StoreOpenError) {
        precondition(migrations.allSatisfy { !$0.name.isEmpty }, "migration names must not be empty")
        precondition(Set(migrations.map(\.name)).count == migrations.count, "migration names must be unique")

        try mapErrors { try connection.execute(createTableSQL) }
        let history = try mapErrors { try recorded(connection) }
        try mapErrors { try verify(history, against: migrations) }

        // Versions up to the highest recorded one were verified above; only later ones take the write lock.
        let applied = history.last?.version ?? 0
        for (offset, migration) in migrations.enumerated().dropFirst(applied) {
            let version = offset + 1
            let started = ContinuousClock.now
            var applied = false
            try mapErrors {
                try connection.transaction {
                    // Checked again under the write lock: another process may have applied it since.
                    let recordedName = try connection.queryOne(
                        "SELECT name FROM schema_migrations WHERE version = ?", [.int(version)]
                    ) { $0.string(0) ?? "" }
                    if let recordedName {
                        guard recordedName == migration.name else {
                            throw StoreOpenError.migrationMismatch(
                                version: version, recorded: recordedName, expected: migration.name
                            )
                        }
                        return
                    }
                    progress?(
                        MigrationProgress(name: migration.name, version: version, total: migrations.count, elapsed: nil)
                    )
                    try connection.execute(migration.sql)
                    try connection.run(
                        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                        [.int(version), .text(migration.name), .real(Date().timeIntervalSince1970)]
                    )
                    applied = true
                }
            }
            if applied, let progress {
                let elapsed = ContinuousClock.now - started
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
                progress(
                    MigrationProgress(name: migration.name, version: version, total: migrations.count, elapsed: seconds)
                )
            }
        }
    }

    /// Checks, without writing, that a database opened read-only is at exactly this build's schema.
    ///
    /// A read-only connection cannot migrate, so a database behind this build (or a file that was
    /// never migrated at all) is refused with `.olderSchema` rather than failing later on a missing
    /// table or column; a newer or mismatching history is refused as in `migrate`.
    public static func checkReadable(
        _ connection: SQLiteConnection,
        _ migrations: [Migration]
    ) throws(StoreOpenError) {
        try mapErrors {
            let hasTable =
                try connection.queryOne(
                    "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'"
                ) { $0.int(0) ?? 0 } ?? 0
            let history = hasTable > 0 ? try recorded(connection) : []
            try verify(history, against: migrations)
            let highest = history.last?.version ?? 0
            if highest < migrations.count {
                throw StoreOpenError.olderSchema(found: highest, known: migrations.count)
            }
        }
    }

    /// The recorded `(version, name)` pairs, in version order.
    private static func recorded(_ connection: SQLiteConnection) throws -> [(version: Int, name: String)] {
        try connection.query("SELECT version, name FROM schema_migrations ORDER BY version") { row in
            (version: row.int(0) ?? 0, name: row.string(1) ?? "")
        }
    }

    /// Refuses a database migrated beyond this build, or whose recorded history differs from
    /// `migrations` (renamed, reordered, or with a gap). Shared with `PostgresMigrationRunner`.
    static func verify(_ recorded: [(version: Int, name: String)], against migrations: [Migration]) throws {
        if let highest = recorded.last?.version, highest > migrations.count {
            throw StoreOpenError.newerSchema(found: highest, known: migrations.count)
        }
        let names = Dictionary(recorded.map { ($0.version, $0.name) }, uniquingKeysWith: { first, _ in first })
        let highest = recorded.last?.version ?? 0
        for (offset, migration) in migrations.prefix(highest).enumerated() {
            let version = offset + 1
            if names[version] != migration.name {
                throw StoreOpenError.migrationMismatch(
                    version: version, recorded: names[version], expected: migration.name
                )
            }
        }
    }

    /// Runs `body`, passing `StoreOpenError`s through and wrapping `SQLiteError`s.
    private static func mapErrors<T>(_ body: () throws -> T) throws(StoreOpenError) -> T {
        do {
            return try body()
        } catch let error as StoreOpenError {
            throw error
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch {
            // Unreachable: the bodies above throw only those two types; keep the text rather than trap.
            throw .sqlite(SQLiteError(code: 1, message: String(describing: error)))
        }
    }
}
