/// The bridge's tables in PostgreSQL, as named append-only migrations (`PostgresMigrationRunner`):
/// a list of its own, in PostgreSQL's types, beside SQLite's `BridgeSchema`. A released migration is
/// never edited; a change is a new one at the end.
public enum PostgresSchema {
    public static let migrations: [Migration] = [
        Migration(
            name: "create leadership",
            sql: """
                -- One row: who leads and since when. The epoch goes up by one at every takeover, and
                -- every write only a leader may make checks it, so a deposed leader's late write
                -- changes nothing (and tells it to step down).
                CREATE TABLE leadership (
                    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                    epoch bigint NOT NULL CHECK (epoch >= 1),
                    holder text NOT NULL,
                    since double precision NOT NULL,
                    heartbeat_at double precision NOT NULL
                );
                """)
    ]
}
