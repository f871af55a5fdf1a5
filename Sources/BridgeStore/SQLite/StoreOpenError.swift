/// Why a database could not be opened and brought to the schema this build expects.
///
/// These are the failures an operator has to act on at startup (or a CLI user when pointing at a
/// database), so each description says what happened and what to do.
public enum StoreOpenError: Error, Sendable, CustomStringConvertible {
    /// SQLite itself failed: opening the file, a pragma, or a migration's SQL.
    case sqlite(SQLiteError)
    /// PostgreSQL failed: connecting, taking the migration lock, or a migration's SQL.
    case postgres(PostgresError)
    /// The database records migrations up to `found`, but this build only knows `known`: it was written
    /// by a newer pushward-bridge, and running older code against it could corrupt it.
    case newerSchema(found: Int, known: Int)
    /// A read-only open found the database at schema version `found` (0: never migrated, or not a
    /// pushward-bridge database) while this build needs `known`; only a read-write open can migrate it.
    case olderSchema(found: Int, known: Int)
    /// Migration `version` was recorded as `recorded` but this build calls it `expected`: the migration
    /// list was edited, renamed or reordered after that database was migrated. `recorded` is `nil` when
    /// the version is missing from `schema_migrations` although later ones are present.
    case migrationMismatch(version: Int, recorded: String?, expected: String)

    public var description: String {
        switch self {
        case .sqlite(let error):
            return "database error: \(error)"
        case .postgres(let error):
            return "database error: \(error)"
        case .newerSchema(let found, let known):
            return "the database was written by a newer version of pushward-bridge (schema version \(found); "
                + "this version knows up to \(known)). Upgrade pushward-bridge, or point `database` at "
                + "another file."
        case .olderSchema(let found, let known):
            return "the database is at schema version \(found) but this version of pushward-bridge needs \(known), "
                + "and a read-only open cannot migrate it. Start `pushward-bridge serve` once to migrate it, or "
                + "check that `database` points at a pushward-bridge database."
        case .migrationMismatch(let version, let recorded, let expected):
            let recordedText = recorded.map { "was recorded as '\($0)'" } ?? "is missing from schema_migrations"
            return "schema migration \(version) \(recordedText) but this version of pushward-bridge calls it "
                + "'\(expected)'; the database does not match this build's schema history"
        }
    }
}
