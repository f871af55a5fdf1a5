import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore
@testable import BridgeStore

/// The two migrations runner waits need, on each engine, from a database as the previous release
/// left it: `jobs.labels` is added and written, and `alerts` takes the reason `queued` while the
/// rows already there, and the CHECK against any other reason, stay.
@Suite("runner-wait migrations")
struct QueuedAlertMigrationTests {
    static let run = RunKey(repository: "acme/widgets", runID: 7, attempt: 1)
    /// The migrations before this change's two.
    static let sqliteBefore = Array(BridgeSchema.migrations.prefix { $0.name != "keep the runner labels of each job" })
    static let postgresBefore = Array(
        PostgresSchema.migrations.prefix { $0.name != "keep the runner labels of each job" })

    static let oldAlert = """
        INSERT INTO alerts (repository, run_id, attempt, reason, body, created_at, state, next_attempt_at, recipient)
        VALUES ('acme/widgets', 7, 1, 'failure', '{"title":"old"}', 10, 'sent', 10, '')
        """

    static func queuedAlert() -> EngineRows {
        var rows = EngineRows()
        rows.alerts = [
            PlannedAlert(
                run: run, reason: .queued, body: ["title": "queued", "body": "b"], activitySlug: nil)
        ]
        return rows
    }

    static func runRows(_ state: RunState) -> EngineRows {
        var rows = EngineRows()
        rows.runs = [EngineRows.Run(state: state, slug: "gh-7", released: false, jobs: [job()])]
        return rows
    }

    static func job() -> JobRecord {
        JobRecord(id: 70, name: "test (arm64)", status: .queued, createdAt: 5, labels: ["self-hosted", "arm64"])
    }

    @Test("SQLite: alerts rebuilt with queued, its rows kept and the CHECK still refusing others; labels written")
    func sqlite() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("bridge.sqlite")
        do {
            let old = try SQLiteConnection(path: path)
            try MigrationRunner.migrate(old, Self.sqliteBefore)
            try old.run(Self.oldAlert, [])
            old.close()
        }
        let database = try BridgeDatabase(path: path)
        #expect(Self.sqliteBefore.count == BridgeSchema.migrations.count - 2)
        try database.write { try $0.save(Self.queuedAlert(), at: 20) }
        let alerts = try database.alerts(repository: "acme/widgets", runID: 7)
        #expect(alerts.map(\.reason) == [.failure, .queued])
        #expect(alerts.first?.title == "old")
        #expect(throws: (any Error).self) {
            try database.connection.run(Self.oldAlert.replacingOccurrences(of: "'failure'", with: "'bogus'"), [])
        }
        var state = RunState(key: Self.run, repository: Repository(fullName: "acme/widgets", htmlURL: nil), at: 0)
        state.jobs[70] = Self.job()
        try database.write { try $0.save(Self.runRows(state), at: 30) }
        let labels = try database.connection.queryOne("SELECT labels FROM jobs WHERE job_id = 70") { $0.string(0) }
        #expect(labels == #"["self-hosted","arm64"]"#)
        #expect(try database.storedRun(Self.run)?.state.jobs[70]?.labels == ["self-hosted", "arm64"])
    }

    @Test("PostgreSQL: the CHECK takes queued, the rows kept and other reasons still refused; labels written")
    func postgres() throws {
        let uri = try PostgresServer.shared().makeDatabase()
        do {
            let old = try PostgresConnection(uri: uri)
            try PostgresMigrationRunner.migrate(old, Self.postgresBefore)
            _ = try old.run(Self.oldAlert)
            old.close()
        }
        let database = try BridgeDatabase(location: .postgresql(uri: uri))
        #expect(Self.postgresBefore.count == PostgresSchema.migrations.count - 2)
        try database.write { try $0.save(Self.queuedAlert(), at: 20) }
        let alerts = try database.alerts(repository: "acme/widgets", runID: 7)
        #expect(alerts.map(\.reason) == [.failure, .queued])
        let check = try PostgresConnection(uri: uri)
        defer { check.close() }
        #expect(throws: (any Error).self) {
            _ = try check.run(Self.oldAlert.replacingOccurrences(of: "'failure'", with: "'bogus'"))
        }
        var state = RunState(key: Self.run, repository: Repository(fullName: "acme/widgets", htmlURL: nil), at: 0)
        state.jobs[70] = Self.job()
        try database.write { try $0.save(Self.runRows(state), at: 30) }
        let labels = try check.query("SELECT labels FROM jobs WHERE job_id = 70") { $0.string(0) }
        #expect(labels == [#"["self-hosted","arm64"]"#])
    }
}
