/// One step of the schema, written as SQL.
///
/// Migrations are append-only (GRDB's habit): the list's order is the schema's history, a migration's
/// 1-based position is its version, and a migration once released is never edited, renamed or
/// reordered — change the schema by appending a new one. The runner checks names against what each
/// database recorded, so a rename or reorder is caught instead of silently skipping SQL.
public struct Migration: Sendable {
    /// A stable, human-readable identifier such as `"create runs"`; recorded in `schema_migrations`.
    public var name: String
    /// One or more statements, run inside the migration's transaction. Must not contain `BEGIN`,
    /// `COMMIT` or `PRAGMA foreign_keys` (which SQLite ignores inside a transaction).
    public var sql: String

    public init(name: String, sql: String) {
        self.name = name
        self.sql = sql
    }
}
