import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// A directory for this file's databases, removed with the value.
private final class DatabaseDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("bridge-database-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// `BridgeDatabase` on real files: migrations, reopening, readers beside a writer, the engine's
/// round trip through storage, a newer schema, payload retention.
@Suite("bridge database")
struct BridgeDatabaseTests {
    private let directory: DatabaseDirectory
    private let path: String

    init() throws {
        directory = try DatabaseDirectory()
        path = directory.path("bridge.sqlite")
    }

    @Test("the door: write commits what its body did, rolls all of it back when the body throws", .onEachEngine)
    func writeDoor() throws {
        let location = try TestStore.location(in: directory.url.path)
        struct Refused: Error {}
        let database = try BridgeDatabase(location: location)
        try database.write { try $0.insert(delivery("kept", at: 1)) }
        #expect(throws: Refused.self) {
            try database.write { database in
                try database.insert(delivery("rolled-back-1", at: 2))
                try database.insert(delivery("rolled-back-2", at: 3))
                throw Refused()
            }
        }
        #expect(try database.hasDelivery("kept"))
        #expect(try !database.hasDelivery("rolled-back-1") && !database.hasDelivery("rolled-back-2"))
        #expect(database.canWrite())
    }

    @Test("the door: a read sees one snapshot while another connection commits", .onEachEngine)
    func readDoor() throws {
        let location = try TestStore.location(in: directory.url.path)
        let writer = try BridgeDatabase(location: location)
        let reader = try BridgeDatabase(location: location, readOnly: true)
        let seen = try reader.read { database -> (Bool, Bool) in
            let before = try database.hasDelivery("late")
            try writer.write { try $0.insert(delivery("late", at: 1)) }
            return (before, try database.hasDelivery("late"))
        }
        #expect(seen == (false, false))
        #expect(try reader.read { try $0.hasDelivery("late") })
    }

    private func delivery(_ id: String, at time: UnixTime, payload: String? = "{}") -> DeliveryRecord {
        DeliveryRecord(
            id: id, hookID: "1", event: "workflow_job", action: "queued", receivedAt: time,
            repository: "acme/widgets", runID: 1, runAttempt: 1, outcome: .applied, reason: nil,
            contentType: "application/json", payload: payload.map { Data($0.utf8) },
            payloadBytes: payload?.utf8.count ?? 0)
    }

    private func schema(_ connection: SQLiteConnection) throws -> [String] {
        try connection.query(
            "SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_schema ORDER BY type, name"
        ) { $0.string(0) ?? "" }
    }

    private func migrations(_ connection: SQLiteConnection) throws -> [String] {
        try connection.query("SELECT version, name, applied_at FROM schema_migrations ORDER BY version") { row in
            "\(row.int(0) ?? 0) \(row.string(1) ?? "") \(row.double(2) ?? 0)"
        }
    }

    // MARK: Migrations

    @Test("migrating an empty file creates every table and records every migration")
    func migrationsFromEmpty() throws {
        #expect(!FileManager.default.fileExists(atPath: path))
        let database = try BridgeDatabase(path: path)
        let tables = try database.connection.query(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ) { $0.string(0) ?? "" }
        // Every table any migration creates, whatever later migrations add, and at least the core ones;
        // a table rebuilt the SQLite way (create a copy, drop, `ALTER TABLE … RENAME TO`) counts once.
        var created: Set<String> = []
        for line in BridgeSchema.migrations.flatMap({ $0.sql.split(separator: "\n") }) {
            let words = line.split(separator: " ").map { String($0.trimmingCharacters(in: .punctuationCharacters)) }
            if words.count >= 3, words[0] == "CREATE", words[1] == "TABLE" {
                created.insert(words[2] == "IF" ? words[5] : words[2])
            } else if words.count >= 6, words[0] == "ALTER", words[1] == "TABLE", words[3] == "RENAME",
                words[4] == "TO"
            {
                created.remove(words[2])
                created.insert(words[5])
            } else if words.count >= 3, words[0] == "DROP", words[1] == "TABLE" {
                created.remove(words[2] == "IF" ? words[4] : words[2])
            }
        }
        #expect(Set(tables) == created.union(["schema_migrations"]))
        #expect(
            Set(tables).isSuperset(of: [
                "activities", "deliveries", "jobs", "pushes", "runs", "schema_migrations", "step_history",
            ]))
        let indexes = try database.connection.query(
            "SELECT name FROM sqlite_schema WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ) { $0.string(0) ?? "" }
        #expect(!indexes.contains("runs_by_update"))
        #expect(
            Set(indexes).isSuperset(of: [
                "deliveries_by_time", "deliveries_by_run", "runs_released_by_update", "pushes_by_run",
                "step_history_by_workflow",
            ]))
        let versions = try database.connection.query("SELECT version, name FROM schema_migrations ORDER BY version") {
            "\($0.int(0) ?? 0):\($0.string(1) ?? "")"
        }
        #expect(
            versions == BridgeSchema.migrations.enumerated().map { "\($0.offset + 1):\($0.element.name)" })
        #expect(try database.connection.queryOne("PRAGMA journal_mode") { $0.string(0) } == "wal")
        // Every table takes a row with the columns the code writes.
        try database.insert(delivery("first", at: 1))
        #expect(try database.hasDelivery("first"))
        #expect(try !database.hasDelivery("second"))
    }

    @Test("reopening a migrated database changes nothing and keeps the data")
    func reopenIsANoOp() throws {
        var database: BridgeDatabase? = try BridgeDatabase(path: path)
        try database?.insert(delivery("kept", at: 10))
        let schemaBefore = try schema(try #require(database).connection)
        let migrationsBefore = try migrations(try #require(database).connection)
        database = nil

        let reopened = try BridgeDatabase(path: path)
        #expect(try schema(reopened.connection) == schemaBefore)
        #expect(try migrations(reopened.connection) == migrationsBefore)
        #expect(try reopened.delivery(id: "kept") == delivery("kept", at: 10))
        let readOnly = try BridgeDatabase(path: path, readOnly: true)
        #expect(try readOnly.listDeliveries().map(\.id) == ["kept"])
    }

    @Test("a read-only connection reads the last commit while the writer is inside a transaction")
    func readerBesideWriter() throws {
        let writer = try BridgeDatabase(path: path)
        try writer.insert(delivery("committed", at: 1))
        let reader = try BridgeDatabase(path: path, readOnly: true)
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            try writer.connection.transaction {
                try writer.insert(delivery("pending", at: 2))
                // A reader blocked by the writer would wait out the busy timeout, then fail.
                #expect(try reader.listDeliveries().map(\.id) == ["committed"])
                #expect(try reader.delivery(id: "pending") == nil)
                // And a reader opened now (schema check included) does not wait either.
                let late = try BridgeDatabase(path: path, readOnly: true)
                #expect(try late.hasDelivery("committed"))
            }
        }
        #expect(elapsed < .seconds(3))
        #expect(Set(try reader.listDeliveries().map(\.id)) == ["committed", "pending"])
        // A read-only connection cannot write.
        #expect(throws: SQLiteError.self) { try reader.insert(delivery("sneaky", at: 3)) }
    }

    // MARK: Engine round trip

    /// Drives an engine the way the daemon does: each delivery applied, every request it plans
    /// acknowledged at once, and what changed saved in one transaction.
    private func drive(
        _ engine: inout BridgeEngine, _ events: [WebhookEvent], database: BridgeDatabase, from start: UnixTime
    ) throws -> UnixTime {
        var now = start
        for event in events {
            now += 1
            _ = engine.receive(event, at: now)
            for slug in engine.sessions.keys.sorted() {
                var rounds = 0
                while case .send(let planned) = engine.decide(slug: slug, at: now), rounds < 16 {
                    engine.acknowledge(planned, at: now)
                    rounds += 1
                }
            }
            let changes = engine.takeChanges()
            try database.write { try $0.save(engine.rows(for: changes, at: now), at: now) }
        }
        return now
    }

    @Test("an engine saved, closed and loaded again has the same runs, cards and history", .onEachEngine)
    func engineRoundTrip() throws {
        let location = try TestStore.location(in: directory.url.path)
        var settings = ActivitySettings()
        settings.endDelay = 0
        settings.endDisplayTime = 0
        settings.minUpdateInterval = 0
        var engine = BridgeEngine(settings: settings)
        let waves: [[RunScript.Job]] = [
            [RunScript.Job("lint", duration: 20)],
            [RunScript.Job("build (linux)", duration: 60), RunScript.Job("build (macos)", duration: 75)],
            [RunScript.Job("test", duration: 120, conclusion: "failure")],
        ]
        let finished = RunScript(runID: 1, runNumber: 1, firstJobID: 100)
        let running = RunScript(runID: 2, runNumber: 2, start: 1_700_001_000, firstJobID: 200)
        var elsewhere = RunScript(runID: 3, firstJobID: 300)
        elsewhere.repository = Repository(fullName: "acme/gadgets", htmlURL: "https://github.com/acme/gadgets")

        var now: UnixTime = 1_800_000_000
        var database: BridgeDatabase? = try BridgeDatabase(location: location)
        now = try drive(&engine, finished.deliveries(waves: waves), database: try #require(database), from: now)
        now = try drive(
            &engine, running.deliveries(waves: waves, complete: false).prefix(7).map { $0 },
            database: try #require(database), from: now)
        now = try drive(
            &engine, elsewhere.deliveries(waves: waves, complete: false).prefix(3).map { $0 },
            database: try #require(database), from: now)
        // A spent quota is kept across a restart too.
        var spent = engine.gate
        spent.quotaPausedUntil = now + 3_600
        spent.reason = "quota.exceeded"
        engine.restore(gate: spent)
        engine.changes.gate = true
        let gateChanges = engine.takeChanges()
        try #require(database).write { try $0.save(engine.rows(for: gateChanges, at: now), at: now) }
        database = nil

        // The test means something only if the engine holds all three kinds of state.
        #expect(engine.runs.count == 3)
        #expect(engine.sessions.count == 2)
        let finishedKey = RunKey(repository: "acme/widgets", runID: 1, attempt: 1)
        #expect(engine.released.contains(finishedKey))
        #expect(engine.sessions.values.allSatisfy { $0.acknowledged != nil })
        var cache = engine.history
        let workflow = HistoryCache.Workflow(repository: "acme/widgets", name: "CI")
        let lookedUp = cache.lookup(workflow)
        let held = try #require(lookedUp)
        #expect(held.summaries.map(\.key) == [finishedKey])

        // A start reads the work in flight only: the finished run stays in storage, and history
        // is read from it per workflow when a run needs it.
        let reopened = try BridgeDatabase(location: location)
        var loaded = try reopened.loadEngine(settings: settings, filter: DeliveryFilter(), at: now)
        #expect(loaded.runs == engine.runs.filter { !engine.released.contains($0.key) })
        #expect(loaded.runs.count == 2)
        #expect(loaded.sessions == engine.sessions)
        #expect(loaded.history.count == 0)
        #expect(try StoreHistory(reopened).finishedRuns(repository: "acme/widgets", workflow: "CI") == held.summaries)
        #expect(try StoreHistory(reopened).storedRun(finishedKey)?.state == engine.runs[finishedKey])
        #expect(loaded.slugs == engine.slugs.filter { !engine.released.contains($0.key) })
        #expect(loaded.released.isEmpty)
        #expect(loaded.progressFloors == engine.progressFloors)
        #expect(loaded.gate == engine.gate)
        #expect(loaded.changes.isEmpty)
        for slug in engine.sessions.keys {
            #expect(loaded.desired(slug: slug, at: now + 5) == engine.desired(slug: slug, at: now + 5), "\(slug)")
            #expect(loaded.decide(slug: slug, at: now + 5) == engine.decide(slug: slug, at: now + 5), "\(slug)")
        }
        // The restored engine goes on exactly as the original does, reading what it needs.
        let next = running.job(203, "test", "queued", createdAt: 300)
        let outcome = try loaded.receive(next, at: now + 10, history: StoreHistory(reopened))
        #expect(outcome == engine.receive(next, at: now + 10))
        #expect(loaded.runs == engine.runs.filter { !engine.released.contains($0.key) })
        // A late delivery for the finished run reads it back rather than starting a blank one.
        let late = finished.job(
            100, "lint", "completed", createdAt: 0, startedAt: 1, completedAt: 20, conclusion: "success")
        _ = try loaded.receive(late, at: now + 11, history: StoreHistory(reopened))
        _ = engine.receive(late, at: now + 11)
        #expect(loaded.runs[finishedKey] == engine.runs[finishedKey])
    }

    @Test(
        "an ended card PushWard keeps for reuse is loaded at start with the deletion asked for; once deleted, it is not",
        .onEachEngine
    )
    func endedCardsToDelete() throws {
        let location = try TestStore.location(in: directory.url.path)
        var settings = ActivitySettings()
        settings.endDelay = 0
        settings.endDisplayTime = 0
        settings.minUpdateInterval = 0
        settings.endedTTL = 600
        var engine = BridgeEngine(settings: settings)
        let script = RunScript(runID: 5, runNumber: 5, firstJobID: 500)
        var database: BridgeDatabase? = try BridgeDatabase(location: location)
        let ended = try drive(
            &engine, script.deliveries(waves: [[RunScript.Job("lint", duration: 20)]]),
            database: try #require(database), from: 1_800_000_000)
        let slug = try #require(engine.sessions.keys.first)
        #expect(engine.sessions[slug]?.phase == .ended)
        database = nil

        var reopened: BridgeDatabase? = try BridgeDatabase(location: location)
        var loaded = try #require(reopened).loadEngine(settings: settings, filter: DeliveryFilter(), at: ended + 300)
        #expect(loaded.sessions[slug] == engine.sessions[slug], "the reuse (and a later DELETE) would be lost")
        #expect(loaded.dueRequests(at: ended + 600, inFlight: []).isEmpty, "kept for the next run")
        // The account nears PushWard's 50: the oldest ended activity goes.
        loaded.observeAccount(activityCount: 45, at: ended + 600)
        let due = loaded.dueRequests(at: ended + 600, inFlight: [])
        #expect(due.map(\.kind) == [.delete])
        for planned in due { loaded.acknowledge(planned, at: ended + 600) }
        let changes = loaded.takeChanges()
        try #require(reopened).write { try $0.save(loaded.rows(for: changes, at: ended + 600), at: ended + 600) }
        reopened = nil

        let again = try BridgeDatabase(location: location)
        let restarted = try again.loadEngine(settings: settings, filter: DeliveryFilter(), at: ended + 700)
        #expect(restarted.sessions[slug] == nil, "a deleted card stays in storage only")
        #expect(try again.session(slug: slug)?.stored.session.deletedAt == ended + 600)
    }

    @Test("hostile names (U+0000, bidi overrides, emoji) come back exactly from the state", .onEachEngine)
    func hostileNamesRoundTrip() throws {
        let location = try TestStore.location(in: directory.url.path)
        var settings = ActivitySettings()
        settings.minUpdateInterval = 0
        var engine = BridgeEngine(settings: settings)
        let hostile = "build\u{0}\u{202E}txt.exe 🧑🏽‍💻 \u{0}"
        var script = RunScript(runID: 9, runNumber: 9, firstJobID: 900)
        script.workflow = "CI \u{0}\u{2066}"
        script.branch = "feat/\u{0}🌶️"
        let waves: [[RunScript.Job]] = [[RunScript.Job(hostile, duration: 20)], [RunScript.Job("test", duration: 30)]]
        var database: BridgeDatabase? = try BridgeDatabase(location: location)
        let now = try drive(
            &engine, script.deliveries(waves: waves, complete: false).prefix(4).map { $0 },
            database: try #require(database), from: 1_800_000_000)
        let key = RunKey(repository: "acme/widgets", runID: 9, attempt: 1)
        let state = try #require(engine.runs[key])
        #expect(state.jobs.values.contains { $0.name == hostile }, "the test needs the hostile job in the state")
        database = nil

        let reopened = try BridgeDatabase(location: location)
        let loaded = try reopened.loadEngine(settings: settings, filter: DeliveryFilter(), at: now)
        #expect(loaded.runs[key] == state)
        #expect(loaded.sessions == engine.sessions)
        // The listing's columns hold the names too: readable on both engines (U+FFFD for U+0000
        // on PostgreSQL, whose text cannot hold it).
        let listed = try #require(try reopened.listRuns().first)
        let expectedBranch = StoreEngine.current == .sqlite ? script.branch : "feat/\u{FFFD}🌶️"
        #expect(listed.branch == expectedBranch)
        #expect(try reopened.cardDecisions(since: 0).count <= 1)
    }

    @Test("PostgreSQL: a session the server ended fails the statement that meets it; the next opens another")
    func postgresReconnects() throws {
        let uri = try PostgresServer.shared().makeDatabase()
        let database = try BridgeDatabase(postgresURI: uri)
        try database.write { try $0.insert(delivery("before", at: 1)) }
        let pid = try #require(try database.store.queryOne("SELECT pg_backend_pid()", []) { $0.int(0) ?? 0 })
        let admin = try PostgresConnection(uri: uri)
        _ = try admin.query("SELECT pg_terminate_backend($1)", [.int(pid)]) { _ in () }
        #expect(throws: (any Error).self) { try database.write { try $0.insert(delivery("lost", at: 2)) } }
        try database.write { try $0.insert(delivery("after", at: 3)) }
        #expect(try database.hasDelivery("before") && database.hasDelivery("after"))
        #expect(try !database.hasDelivery("lost"))
        #expect(try database.store.queryOne("SELECT pg_backend_pid()", []) { $0.int(0) ?? 0 } != pid)
    }

    // MARK: Schema versions

    @Test("a database a newer version migrated further refuses to open, saying so")
    func newerSchemaRefused() throws {
        let database = try BridgeDatabase(path: path)
        let future = BridgeSchema.migrations.count + 1
        try database.connection.run(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from the future', 0)",
            [.integer(Int64(future))])
        database.connection.close()

        for readOnly in [false, true] {
            do {
                _ = try BridgeDatabase(path: path, readOnly: readOnly)
                Issue.record("opened a database at schema version \(future) (readOnly: \(readOnly))")
            } catch {
                guard case .newerSchema(let found, let known) = error else {
                    Issue.record("unexpected error \(error)")
                    continue
                }
                #expect(found == future)
                #expect(known == BridgeSchema.migrations.count)
                #expect(error.description.contains("newer version of pushward-bridge"))
                #expect(error.description.contains("schema version \(future)"))
            }
        }
        // Refusing wrote nothing: the future row is still the newest.
        let check = try SQLiteConnection(path: path, mode: .readOnly)
        #expect(try check.queryOne("SELECT max(version) FROM schema_migrations") { $0.int(0) } == future)
    }

    // MARK: Retention

    @Test("pruning nulls payloads received before the cutoff and keeps every row", .onEachEngine)
    func payloadPruning() throws {
        let location = try TestStore.location(in: directory.url.path)
        let database = try BridgeDatabase(location: location)
        for (index, time) in [100.0, 200, 300, 400].enumerated() {
            try database.insert(delivery("d\(index)", at: time, payload: #"{"n":\#(index)}"#))
        }
        try database.insert(delivery("no-payload", at: 50, payload: nil))

        #expect(try database.prunePayloads(receivedBefore: 350, limit: 2) == 2)
        #expect(try database.prunePayloads(receivedBefore: 350) == 1)
        #expect(try database.prunePayloads(receivedBefore: 350) == 0)

        let rows = try database.listDeliveries(includePayload: true)
        #expect(rows.count == 5)
        for id in ["d0", "d1", "d2", "no-payload"] {
            let row = try #require(try database.delivery(id: id))
            #expect(row.payload == nil, "\(id)")
            #expect(row.outcome == .applied)
        }
        #expect(try database.delivery(id: "d1")?.payloadBytes == 7)
        #expect(try database.delivery(id: "d3")?.payload == Data(#"{"n":3}"#.utf8))
    }

    // MARK: Compressed payloads

    /// A real-sized webhook body: the recorded job event's shape, repeated URLs and all.
    private static func jobEventBody(_ index: Int) -> Data {
        let steps = (0..<12).map { step in
            #"{"name":"step \#(step)","status":"completed","conclusion":"success","number":\#(step),"#
                + #""started_at":"2023-10-13T10:11:52Z","completed_at":"2023-10-13T10:12:10Z"}"#
        }
        let urls = (0..<40).map { #""url_\#($0)":"https://api.github.com/repos/acme/widgets/actions/x/\#($0)""# }
        return Data(
            (#"{"action":"completed","index":\#(index),"workflow_job":{"steps":["#
                + steps.joined(separator: ",") + "]},\"repository\":{" + urls.joined(separator: ",") + "}}").utf8)
    }

    @Test("payloads are kept compressed when smaller and read back byte for byte", .onEachEngine)
    func compressedPayloads() throws {
        let location = try TestStore.location(in: directory.url.path)
        let database = try BridgeDatabase(location: location)
        let body = Self.jobEventBody(1)
        var record = delivery("big", at: 1)
        record.payload = body
        record.payloadBytes = body.count
        try database.insert(record)
        // Random bytes do not compress: kept as they are.
        let noise = Data((0..<4_096).map { _ in UInt8.random(in: 0...255) })
        record = delivery("noise", at: 2)
        record.payload = noise
        record.payloadBytes = noise.count
        try database.insert(record)

        let stored = try database.store.query(
            "SELECT id, payload_encoding, length(payload) FROM deliveries ORDER BY id", []
        ) { "\($0.string(0) ?? ""):\($0.string(1) ?? ""):\($0.int(2) ?? 0)" }
        #expect(stored.count == 2)
        let big = try #require(stored.first { $0.hasPrefix("big:") }).split(separator: ":")
        #expect(big[1] == "lz4")
        #expect(Int(big[2])! * 3 < body.count, "compressed to \(big[2]) of \(body.count) bytes")
        #expect(stored.contains("noise:identity:4096"))
        #expect(try database.delivery(id: "big")?.payload == body)
        #expect(try database.delivery(id: "noise")?.payload == noise)
        #expect(try database.listDeliveries(includePayload: true).map(\.payload).contains(body))
        // Compressed on the HTTP thread and handed over: the same row.
        let handed = PayloadCompression.stored(Self.jobEventBody(2))
        record = delivery("handed", at: 3)
        record.payload = Self.jobEventBody(2)
        record.payloadBytes = record.payload!.count
        try database.insert(record, stored: handed)
        #expect(handed.encoding == .lz4)
        #expect(try database.delivery(id: "handed")?.payload == Self.jobEventBody(2))
    }

    @Test("a compressed payload that no longer decompresses to its size reads as nil, the row intact")
    func damagedPayload() throws {
        let database = try BridgeDatabase(path: path)
        var record = delivery("damaged", at: 1)
        record.payload = Self.jobEventBody(3)
        record.payloadBytes = record.payload!.count
        try database.insert(record)
        try database.connection.run(
            "UPDATE deliveries SET payload = substr(payload, 1, 20) WHERE id = ?", [.text("damaged")])
        let row = try #require(try database.delivery(id: "damaged"))
        #expect(row.payload == nil)
        #expect(row.payloadBytes == Self.jobEventBody(3).count)
        #expect(row.outcome == .applied)
    }

    @Test("payloads stored before compression existed still read back after the migration")
    func payloadsFromBeforeCompression() throws {
        let body = Self.jobEventBody(4)
        do {
            let old = try SQLiteConnection(path: path)
            try MigrationRunner.migrate(old, Array(BridgeSchema.migrations.prefix(3)))
            try old.run(
                """
                INSERT INTO deliveries (id, event, received_at, outcome, payload, payload_bytes)
                VALUES ('old', 'workflow_job', 1, 'applied', ?, ?)
                """, [.blob(body), .integer(Int64(body.count))])
            old.close()
        }
        let database = try BridgeDatabase(path: path)
        #expect(
            try database.connection.queryOne("SELECT payload_encoding FROM deliveries") { $0.string(0) } == "identity")
        #expect(try database.delivery(id: "old")?.payload == body)
    }
}
