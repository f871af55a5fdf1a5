/// What `MigrationRunner.migrate` reports as it applies a migration, so a start that upgrades a
/// large database says in the log what it is doing rather than looking hung.
public struct MigrationProgress: Sendable, Equatable {
    /// The migration's name, as recorded in `schema_migrations`.
    public var name: String
    /// Its version (1-based position in the list).
    public var version: Int
    /// How many migrations the list has.
    public var total: Int
    /// Seconds it took, once applied; nil when it is about to start.
    public var elapsed: Double?

    public init(name: String, version: Int, total: Int, elapsed: Double?) {
        self.name = name
        self.version = version
        self.total = total
        self.elapsed = elapsed
    }
}
