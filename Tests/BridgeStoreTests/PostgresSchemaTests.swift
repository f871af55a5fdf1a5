import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// `PostgresSchema` against SQLite's `BridgeSchema`, both migrated on real engines: the same
/// tables, columns (in PostgreSQL's type for each SQLite affinity), nullability and index names, so
/// a statement written for one names the same things on the other; and `pushes_per_day` counting
/// the same way. A later SQLite migration without its PostgreSQL twin fails here.
@Suite struct PostgresSchemaTests {
    /// A column as both engines can describe it.
    struct Column: Hashable, CustomStringConvertible {
        var table: String
        var name: String
        var type: String
        var notNull: Bool
        var description: String { "\(table).\(name) \(type)\(notNull ? " NOT NULL" : "")" }
    }

    /// Tables only one engine has: the lease and the card claims are for several instances, which
    /// SQLite never serves.
    static let postgresOnlyTables: Set<String> = ["leadership", "card_claims"]
    /// Columns and indexes only PostgreSQL has, for the same reason: deliveries a follower
    /// committed for the leader.
    static let postgresOnlyColumns: Set<String> = ["deliveries.waiting"]
    static let postgresOnlyIndexes: Set<String> = ["deliveries_waiting"]
    /// Tables each migration runner keeps its own way (`PostgresMigrationRunner`'s versions are
    /// `integer`); compared by name only.
    static let bookkeepingTables: Set<String> = ["schema_migrations"]

    let scratch: ScratchDirectory
    let sqlite: BridgeDatabase
    let postgres: PostgresConnection

    init() throws {
        scratch = try ScratchDirectory()
        sqlite = try BridgeDatabase(path: scratch.path("bridge.sqlite"))
        postgres = try PostgresConnection(uri: try PostgresServer.shared().makeDatabase())
        try PostgresMigrationRunner.migrate(postgres, PostgresSchema.migrations)
    }

    /// SQLite's declared types mapped to the PostgreSQL type each must be.
    static func postgresType(ofSQLite declared: String) -> String {
        switch declared.uppercased() {
        case "INTEGER": "bigint"
        case "REAL": "double precision"
        case "TEXT": "text"
        case "BLOB": "bytea"
        default: "unknown SQLite type \(declared)"
        }
    }

    func sqliteTables() throws -> [String] {
        try sqlite.connection.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name", []
        ) { $0.string(0) ?? "" }
    }

    func postgresTables() throws -> [String] {
        try postgres.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name"
        ) { $0.string(0) ?? "" }
        .filter { !Self.postgresOnlyTables.contains($0) }
    }

    @Test func bothEnginesHaveTheSameTables() throws {
        let tables = try sqliteTables()
        #expect(tables.count > 15)
        #expect(try postgresTables() == tables)
    }

    @Test func everyColumnHasTheSameNameTypeAndNullability() throws {
        var sqliteColumns: Set<Column> = []
        for table in try sqliteTables() where !Self.bookkeepingTables.contains(table) {
            let columns = try sqlite.connection.query(
                "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)",
                [
                    .text(table)
                ]
            ) { row in
                // A primary key column is NOT NULL on PostgreSQL whatever it declares; SQLite
                // enforces the same for the keys this schema declares (every one is NOT NULL or an
                // INTEGER PRIMARY KEY), so compare them as not null.
                Column(
                    table: table, name: row.string(0) ?? "", type: Self.postgresType(ofSQLite: row.string(1) ?? ""),
                    notNull: (row.int(2) ?? 0) == 1 || (row.int(3) ?? 0) > 0)
            }
            sqliteColumns.formUnion(columns)
        }
        let postgresColumns = try postgres.query(
            """
            SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
            WHERE table_schema = 'public'
            """
        ) { row in
            Column(
                table: row.string(0) ?? "", name: row.string(1) ?? "", type: row.string(2) ?? "",
                notNull: row.string(3) == "NO")
        }
        .filter { !Self.postgresOnlyTables.contains($0.table) && !Self.bookkeepingTables.contains($0.table) }
        .filter { !Self.postgresOnlyColumns.contains("\($0.table).\($0.name)") }
        #expect(sqliteColumns.count > 100)
        #expect(
            Set(postgresColumns).symmetricDifference(sqliteColumns).sorted { $0.description < $1.description }.isEmpty)
    }

    @Test func everyNamedIndexExistsOnBothEngines() throws {
        // Named indexes only: the ones a primary key or UNIQUE constraint makes are named by each
        // engine its own way.
        let sqliteIndexes = try sqlite.connection.query(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name", []
        ) { $0.string(0) ?? "" }
        let postgresIndexes = try postgres.query(
            """
            SELECT indexname FROM pg_indexes WHERE schemaname = 'public'
                AND indexname NOT IN (SELECT conname FROM pg_constraint) ORDER BY indexname
            """
        ) { $0.string(0) ?? "" }
        .filter { !Self.postgresOnlyIndexes.contains($0) }
        #expect(sqliteIndexes.count > 20)
        #expect(postgresIndexes == sqliteIndexes)
    }

    @Test func pushesPerDayCountsTheSameAcknowledgedPushesOnBoth() throws {
        let day = 1_796_083_200.0  // 2026-12-01T00:00:00Z
        let pushes: [(sentAt: Double, status: Int?)] = [
            (day - 0.5, 200), (day, 201), (day + 86_399.9, 299), (day + 86_400, 200), (day + 10, 300),
            (day + 20, 422), (day + 30, nil), (day + 40, 199),
        ]
        for push in pushes {
            try sqlite.connection.run(
                """
                INSERT INTO pushes (slug, repository, run_id, attempt, kind, method, path, body, sent_at, status, outcome)
                VALUES ('gh-1', 'acme/widgets', 1, 1, 'update', 'PATCH', '/activities/gh-1', '{}', ?, ?, 'acknowledged')
                """, [.real(push.sentAt), push.status.map { .integer(Int64($0)) } ?? .null])
            _ = try postgres.run(
                """
                INSERT INTO pushes (slug, repository, run_id, attempt, kind, method, path, body, sent_at, status, outcome)
                VALUES ('gh-1', 'acme/widgets', 1, 1, 'update', 'PATCH', '/activities/gh-1', '{}', $1, $2, 'acknowledged')
                """, [.real(push.sentAt), .int(push.status)])
        }
        let sqliteDays = try sqlite.connection.query("SELECT day, acknowledged FROM pushes_per_day ORDER BY day", []) {
            [$0.int(0) ?? -1, $0.int(1) ?? -1]
        }
        let postgresDays = try postgres.query("SELECT day, acknowledged FROM pushes_per_day ORDER BY day") {
            [$0.int(0) ?? -1, $0.int(1) ?? -1]
        }
        let first = Int(day / 86_400)
        #expect(sqliteDays == [[first - 1, 1], [first, 2], [first + 1, 1]])
        #expect(postgresDays == sqliteDays)
    }

    @Test func theCardDecisionIndexReadsTheSamePathAsSQLite() throws {
        // The chart's query filters on the decision time; on PostgreSQL the same path through
        // jsonb, which must find the row SQLite's json_extract finds (and skip a run without one).
        for (id, state) in [(1, #"{"cardDecision":{"decidedAt":1796083200.5}}"#), (2, "{}")] {
            let insert = """
                INSERT INTO runs (repository, run_id, attempt, status, slug, first_seen_at, updated_at, state)
                VALUES ('acme/widgets', \(id), 1, 'completed', 'gh-1', 0, 0, '\(state)')
                """
            try sqlite.connection.execute(insert)
            try postgres.execute(insert)
        }
        let sqliteIDs = try sqlite.connection.query(
            "SELECT run_id FROM runs WHERE json_extract(state, '$.cardDecision.decidedAt') >= ?",
            [
                .real(1_796_083_200)
            ]
        ) { $0.int(0) ?? 0 }
        let postgresIDs = try postgres.query(
            "SELECT run_id FROM runs WHERE (state::jsonb #>> '{cardDecision,decidedAt}')::double precision >= $1",
            [
                .real(1_796_083_200)
            ]
        ) { $0.int(0) ?? 0 }
        #expect(sqliteIDs == [1])
        #expect(postgresIDs == sqliteIDs)
    }
}
