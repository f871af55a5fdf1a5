import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing
import WebhookServer

/// Whole runs through a daemon over HTTP: the recorded attempt-10 replay against `render`, history
/// across a restart, a failing store, large bodies and slow clients.
@Suite("daemon end to end", .timeLimit(.minutes(1)))
struct DaemonEndToEndTests {
    /// The recorded attempt-10 deliveries, decoded as `render` decodes them.
    static func attempt10Events() throws -> [WebhookEvent] {
        try DaemonFixtures.attempt10.map { name in
            try WebhookDecoder.decode(
                event: DaemonFixtures.event(of: name), body: try DaemonFixtures.data(name), contentType: nil)
        }
    }

    // MARK: Replay against render

    @Test("replaying attempt 10 ends the card with the content render computes, pushes in lifecycle order")
    func replayMatchesRender() async throws {
        try await withDaemon { daemon in
            for name in DaemonFixtures.attempt10 {
                let response = try await daemon.deliver(
                    event: DaemonFixtures.event(of: name), id: name, body: try DaemonFixtures.data(name))
                #expect(response.status == 202, "\(name): \(response.text)")
            }
            let runs = try await daemon.read { try $0.listRuns() }
            let run = try #require(runs.first)
            #expect(runs.count == 1)
            #expect(try await daemon.waitUntilEnded(slug: run.slug), "the card never ended")

            let slug = run.slug
            let key = run.key
            let (card, pushes) = try await daemon.read { database in
                (try database.session(slug: slug), try database.requests(for: key))
            }
            let stored = try #require(card)

            var harness = BridgeHarness(settings: daemon.configuration.activity, filter: daemon.configuration.filter)
            harness.play(try Self.attempt10Events())
            #expect(harness.violations.isEmpty)
            let rendered = try #require(harness.server.activities[slug], "render drew no card on \(slug)")
            #expect(rendered.state == "ended")
            #expect(stored.acknowledged == .object(rendered.content))
            #expect(stored.stored.desired?["content"] == .object(rendered.content))
            #expect(stored.stored.desired?["final"] == true)
            #expect(stored.stored.session.owner == key)

            let kinds = pushes.map(\.kind)
            #expect(kinds.first == "create")
            #expect(kinds.last == "end")
            // When the dispatcher first looks after the whole run arrived (a busy machine), the
            // first frame already is the end frame, sent whole: create, finalFrame, end.
            if kinds.count == 3 {
                #expect(kinds == ["create", "finalFrame", "end"])
            } else {
                #expect(kinds.dropFirst().first == "firstFrame")
                #expect(kinds.suffix(2) == ["finalFrame", "end"])
                #expect(kinds.dropFirst(2).dropLast(2).allSatisfy { $0 == "update" }, "\(kinds)")
            }
            #expect(pushes.allSatisfy { $0.outcome == "dry-run" && $0.slug == slug })
            #expect(pushes.first?.method == "POST")
            #expect(pushes.last?.body == #"{"state":"ended"}"#)
            // How many updates there are depends on how the deliveries and the dispatcher interleave
            // (changes made while a request is out go together in one follow-up), never more than render's.
            #expect(kinds.count <= harness.sent.count)
        }
    }

    // MARK: History across a restart

    /// Three `needs:` waves; the middle one a matrix. Step durations 20, 90 (the longest shard), 120.
    static let waves: [[RunScript.Job]] = [
        [RunScript.Job("lint", duration: 20)],
        [RunScript.Job("build (linux)", duration: 60), RunScript.Job("build (macos)", duration: 90)],
        [RunScript.Job("test", duration: 120)],
    ]

    static let firstRun = RunScript(runID: 101, runNumber: 1, start: 1_700_000_000, firstJobID: 1_000)
    static let secondRun = RunScript(runID: 102, runNumber: 2, start: 1_700_050_000, firstJobID: 2_000)

    /// The second run's first deliveries: requested, started, its first job queued.
    static var secondRunOpening: [WebhookEvent] {
        [
            secondRun.run("requested", at: 0), secondRun.run("in_progress", at: 1),
            secondRun.job(2_000, "lint", "queued", createdAt: 2),
        ]
    }

    private func deliver(_ events: [WebhookEvent], to daemon: RunningDaemon) async throws {
        for event in events {
            let response = try await daemon.deliver(
                event: GitHubPayload.eventName(event), id: deliveryID(), body: GitHubPayload.body(event))
            #expect(response.status == 202, "\(response.text)")
        }
    }

    @Test("a restarted daemon seeds the next run of a workflow with total_steps and step_weights from history")
    func historySurvivesRestart() async throws {
        let directory = try ScratchDirectory()
        let configuration = TestConfiguration(database: directory.path("bridge.sqlite"))

        let first = try await RunningDaemon.start(configuration, directory: directory)
        try await deliver(Self.firstRun.deliveries(waves: Self.waves), to: first)
        let slug = try #require(try await first.read { try $0.listRuns().first?.slug })
        #expect(try await first.waitUntilEnded(slug: slug))
        try await first.stop()

        let second = try await RunningDaemon.start(configuration, directory: directory)
        try await deliver(Self.secondRunOpening, to: second)
        let card = try await second.read { try $0.session(slug: slug) }
        try await second.stop()

        let desired = try #require(card?.stored.desired)
        #expect(desired["run"] == .string(RunKey(repository: "acme/widgets", runID: 102, attempt: 1).description))
        let content = try #require(desired["content"])
        #expect(content["total_steps"] == 3)
        #expect(content["step_weights"] == [20, 90, 120])
        #expect(content["step_labels"] == ["lint", "build", "test"])
        #expect(content["current_step"] == 0 || content["current_step"] == 1)

        // Without that history the same deliveries know of one step only and draw no weights.
        let fresh = try await withDaemon { daemon in
            try await deliver(Self.secondRunOpening, to: daemon)
            return try await daemon.read { try $0.session(slug: slug)?.stored.desired?["content"] }
        }
        #expect(fresh?["total_steps"] == 1)
        #expect(fresh?["step_weights"] == nil)
    }

    // MARK: A store that cannot commit

    @Test("503 when another connection holds the write lock past the busy timeout; a redelivery then applies")
    func lockedStore() async throws {
        try await withDaemon { daemon in
            let path = daemon.databasePath
            let port = daemon.port
            let body = GitHubPayload.body(WebhookIngressTests.script.run("requested", at: 0))
            let headers = signedHeaders(
                event: "workflow_run", id: "locked-1", body: body, secret: daemon.configuration.webhookSecrets[0])
            // Anything the daemon does at start (retention pruning) is done before the lock is taken,
            // so the delivery alone waits behind it.
            #expect(try await daemon.request(method: "GET", target: "/readyz").status == 200)
            // The lock is held for exactly as long as the daemon takes to give up (its busy timeout).
            let response = try await offPool {
                let blocker = try SQLiteConnection(path: path)
                try blocker.execute("BEGIN EXCLUSIVE")
                defer { try? blocker.execute("ROLLBACK") }
                return try HTTPTestClient.request(
                    port: port, method: "POST", target: "/webhook", headers: headers, body: body)
            }
            #expect(response.status == 503)
            #expect(response.json?["error"] == "store_unavailable")
            #expect(response.body.count < 1_024)
            #expect(daemon.log.entries.contains { $0["level"] == "error" && $0["github.delivery"] == "locked-1" })
            #expect(try await daemon.read { try $0.delivery(id: "locked-1") } == nil)

            // GitHub redelivers with the same id: it is applied, not taken for a duplicate.
            let redelivery = try await daemon.request(method: "POST", target: "/webhook", headers: headers, body: body)
            #expect(redelivery.status == 202)
            #expect(try await daemon.read { try $0.delivery(id: "locked-1")?.outcome } == .applied)
        }
    }

    // MARK: Group commit

    /// How long the group-commit tests wait for a condition only their own steps make true. Only a
    /// lost behaviour (or a hang) runs it out, so it is generous: a sanitizer slows every step manyfold.
    static let patience: Double = 40

    /// Holds the database's write lock from another connection while `body` runs, so the daemon's
    /// commit under way waits and everything arriving meanwhile queues.
    ///
    /// The daemon's busy timeout (5 s) would turn a long `body` into a 503 for the waiting commit, and
    /// how long `body` takes depends on the machine (twelve HTTP requests under ThreadSanitizer can take
    /// more). So for as long as the lock is held the daemon waits 10 minutes, past the suite's time
    /// limit: the lock goes when `body`'s conditions hold, never because a clock ran out.
    static func withWriteLockHeld<T: Sendable>(
        _ daemon: RunningDaemon, _ body: () async throws -> T
    ) async throws -> T {
        let path = daemon.databasePath
        let service = daemon.daemon.service
        try await service.setStoreBusyTimeout(milliseconds: 600_000)
        let blocker = try await offPool { () -> SQLiteConnectionBox in
            let connection = try SQLiteConnection(path: path)
            try connection.execute("BEGIN EXCLUSIVE")
            return SQLiteConnectionBox(connection)
        }
        let result: T
        do {
            result = try await body()
        } catch {
            try? await offPool { try blocker.connection.execute("ROLLBACK") }
            try? await service.setStoreBusyTimeout(milliseconds: SQLiteConnection.busyTimeoutMilliseconds)
            throw error
        }
        try await offPool { try blocker.connection.execute("ROLLBACK") }
        try await service.setStoreBusyTimeout(milliseconds: SQLiteConnection.busyTimeoutMilliseconds)
        return result
    }

    typealias Answers = Task<[HTTPTestClient.Response], any Error>

    /// Sends deliveries at once, each on its own thread; the answers in the order given. An answer
    /// comes only after the commit the test holds back for as long as its steps take, so each waits
    /// past the suite's time limit (the guard against a hang) rather than the client's usual 20 s.
    static func deliverConcurrently(
        _ daemon: RunningDaemon, _ deliveries: [(id: String, body: Data)]
    ) -> Answers {
        let port = daemon.port
        let secret = daemon.configuration.webhookSecrets[0]
        return Task {
            try await withThrowingTaskGroup(of: (Int, HTTPTestClient.Response).self) { group in
                for (index, delivery) in deliveries.enumerated() {
                    let headers = signedHeaders(
                        event: "workflow_run", id: delivery.id, body: delivery.body, secret: secret)
                    group.addTask {
                        let response = try await offPool {
                            try HTTPTestClient.request(
                                port: port, method: "POST", target: "/webhook", headers: headers, body: delivery.body,
                                timeout: 120)
                        }
                        return (index, response)
                    }
                }
                var answers: [Int: HTTPTestClient.Response] = [:]
                for try await (index, response) in group { answers[index] = response }
                return deliveries.indices.map { answers[$0]! }
            }
        }
    }

    static func requested(_ runID: Int, repository: String = "acme/widgets") -> Data {
        var script = RunScript(runID: runID)
        script.repository = Repository(fullName: repository, htmlURL: "https://github.com/\(repository)")
        return GitHubPayload.body(script.run("requested", at: 0))
    }

    @Test("deliveries arriving during a commit share the next transaction, each answered after it commits")
    func groupCommit() async throws {
        try await withDaemon { daemon in
            let service = daemon.daemon.service
            #expect(try await daemon.request(method: "GET", target: "/readyz").status == 200)
            let before = daemon.daemon.counters.observations("ingest_batch_size")
            let (first, rest) = try await Self.withWriteLockHeld(daemon) { () async throws -> (Answers, Answers) in
                // The first delivery's transaction waits for the lock...
                let first = Self.deliverConcurrently(daemon, [("group-0", Self.requested(700))])
                #expect(try await eventually(timeout: Self.patience) { service.deliveriesWaiting == 1 })
                // ...while eleven more gather behind it; none is answered while nothing commits.
                let rest = Self.deliverConcurrently(
                    daemon, (1...11).map { ("group-\($0)", Self.requested(700 + $0)) })
                #expect(try await eventually(timeout: Self.patience) { service.deliveriesWaiting == 12 })
                #expect(
                    try await daemon.read {
                        try $0.connection.queryOne("SELECT count(*) FROM deliveries") { $0.int(0) }
                    } == 0)
                return (first, rest)
            }
            let answers = try await first.value + rest.value
            #expect(answers.map(\.status) == Array(repeating: 202, count: 12))
            let after = daemon.daemon.counters.observations("ingest_batch_size")
            // Two transactions: the one that waited for the lock, then the eleven together.
            #expect(after.count - before.count == 2)
            #expect(after.sum - before.sum == 12)
            #expect(
                try await daemon.read {
                    try $0.connection.queryOne("SELECT count(*) FROM deliveries WHERE outcome = 'applied'") {
                        $0.int(0)
                    }
                } == 12)
            #expect(try await daemon.read { try $0.listRuns().count } == 12)
            #expect(service.deliveriesWaiting == 0)
        }
    }

    @Test("a delivery the store refuses inside a group is 503 alone; the rest of its group commits")
    func groupCommitIsolatesFailure() async throws {
        try await withDaemon { daemon in
            let path = daemon.databasePath
            let service = daemon.daemon.service
            try await offPool {
                try SQLiteConnection(path: path).execute(
                    """
                    CREATE TRIGGER refuse_doomed BEFORE INSERT ON deliveries WHEN NEW.id LIKE 'doomed-%'
                    BEGIN SELECT RAISE(ABORT, 'simulated write failure'); END
                    """)
            }
            #expect(try await daemon.request(method: "GET", target: "/readyz").status == 200)
            let group: [(id: String, body: Data)] = [
                ("healthy-1", Self.requested(801)), ("doomed-1", Self.requested(802, repository: "acme/doomed")),
                ("healthy-2", Self.requested(803)), ("healthy-3", Self.requested(804)),
            ]
            let (first, rest) = try await Self.withWriteLockHeld(daemon) { () async throws -> (Answers, Answers) in
                let first = Self.deliverConcurrently(daemon, [("healthy-0", Self.requested(800))])
                #expect(try await eventually(timeout: Self.patience) { service.deliveriesWaiting == 1 })
                let rest = Self.deliverConcurrently(daemon, group)
                #expect(try await eventually(timeout: Self.patience) { service.deliveriesWaiting == 5 })
                return (first, rest)
            }
            #expect(try await first.value.map(\.status) == [202])
            let answers = try await rest.value
            #expect(answers.map(\.status) == [202, 503, 202, 202])
            #expect(answers[1].json?["error"] == "store_unavailable")
            #expect(daemon.log.entries(containing: "committing each alone").count == 1)
            #expect(daemon.log.entries.contains { $0["level"] == "error" && $0["github.delivery"] == "doomed-1" })
            let (stored, repositories) = try await daemon.read { database in
                (
                    try database.connection.query("SELECT id FROM deliveries ORDER BY id") { $0.string(0) ?? "" },
                    Set(try database.listRuns().map(\.key.repository))
                )
            }
            #expect(stored == ["healthy-0", "healthy-1", "healthy-2", "healthy-3"])
            // The doomed run was applied in memory before its group failed; the reload forgot it.
            #expect(repositories == ["acme/widgets"])
        }
    }

    @Test("/metrics and the status page answer while the store's queue waits on a lock another process holds")
    func scrapeDoesNotWaitForTheStore() async throws {
        try await withDaemon { daemon in
            let service = daemon.daemon.service
            let adminPort = daemon.daemon.adminPort
            func admin(_ target: String) async throws -> HTTPTestClient.Response {
                try await offPool {
                    try HTTPTestClient.request(
                        port: adminPort, method: "GET", target: target, headers: [], body: Data())
                }
            }
            let waiting = try await Self.withWriteLockHeld(daemon) { () async throws -> Answers in
                // The store's queue is inside a commit that waits for the lock...
                let waiting = Self.deliverConcurrently(daemon, [("scrape-0", Self.requested(900))])
                #expect(try await eventually(timeout: Self.patience) { service.deliveriesWaiting == 1 })
                // ...and a scrape answers meanwhile, with what it knows as of the last step: the
                // delivery waiting, nothing committed yet. (It used to wait in the queue behind the
                // commit, for as long as the lock was held.)
                let metrics = try await admin("/metrics")
                #expect(metrics.status == 200)
                let text = String(decoding: metrics.body, as: UTF8.self)
                #expect(MetricsTests.sample(text, "pushward_bridge_deliveries_waiting") == 1)
                #expect(MetricsTests.sample(text, "pushward_bridge_runs_held") == 0)
                #expect(try await admin("/").status == 200)
                return waiting
            }
            #expect(try await waiting.value.map(\.status) == [202])
            // Once the commit is through, the next scrape shows the run it applied.
            let after = String(decoding: try await admin("/metrics").body, as: UTF8.self)
            #expect(MetricsTests.sample(after, "pushward_bridge_runs_held") == 1)
            #expect(MetricsTests.sample(after, "pushward_bridge_deliveries_waiting") == 0)
        }
    }

    @Test("the daemon checkpoints the WAL itself, not in commits, and leaves it empty when it stops")
    func checkpointerWired() async throws {
        try await withDaemon { daemon in
            let path = daemon.databasePath
            for index in 0..<5 {
                let response = try await daemon.deliver(
                    event: "workflow_run", id: "wal-\(index)", body: Self.requested(900 + index))
                #expect(response.status == 202)
            }
            // The checkpointer runs beside the writer (its gauge is there only when it does).
            let metrics = try await offPool { [port = daemon.daemon.adminPort] in
                try HTTPTestClient.request(port: port, method: "GET", target: "/metrics")
            }
            #expect(metrics.status == 200)
            #expect(metrics.text.contains("pushward_bridge_wal_frames_not_checkpointed"))
            #expect(metrics.text.contains("# TYPE pushward_bridge_wal_restarts_total counter\n"))
            #expect(metrics.text.contains("\npushward_bridge_wal_handovers_total 0\n"))
            #expect(metrics.text.contains("# TYPE pushward_bridge_wal_database_syncs_total counter\n"))
            // The final checkpoint comes after the background work, or after the shutdown deadline
            // if that runs out first; then a commit of the dispatcher can follow it into the WAL.
            // The deadline is not what this test is about, and a starved process (a sanitizer, a
            // busy machine) can overrun 10 s: give the work all the time it takes.
            try await daemon.stop(deadline: 600)
            let walBytes = try await offPool {
                (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
            }
            // The daemon's warnings (a checkpoint that could not truncate, a shutdown past its
            // deadline) say why, should the WAL not be empty.
            let warnings = daemon.log.entries.filter { $0["level"] == "warning" || $0["level"] == "error" }
            #expect(walBytes == 0, "the final TRUNCATE checkpoint left \(walBytes) bytes; \(warnings)")
            #expect(try await daemon.read { try $0.listDeliveries().count } == 5)
        }
    }

    @Test("a commit that fails mid-transaction is 503 and leaves the engine as it was")
    func failedCommitRollsBack() async throws {
        try await withDaemon { daemon in
            let path = daemon.databasePath
            try await offPool {
                let other = try SQLiteConnection(path: path)
                try other.execute(
                    """
                    CREATE TRIGGER refuse_doomed BEFORE INSERT ON deliveries WHEN NEW.id LIKE 'doomed-%'
                    BEGIN SELECT RAISE(ABORT, 'simulated write failure'); END
                    """)
            }
            var doomedScript = RunScript(runID: 500)
            doomedScript.repository = Repository(fullName: "acme/doomed", htmlURL: "https://github.com/acme/doomed")
            let doomedBody = GitHubPayload.body(doomedScript.run("requested", at: 0))
            let doomed = try await daemon.deliver(event: "workflow_run", id: "doomed-1", body: doomedBody)
            #expect(doomed.status == 503)

            // A delivery for another repository wakes the dispatcher, which looks at every card it
            // knows: had the doomed run stayed in memory, it would now get a card too.
            let healthy = RunScript(runID: 501)
            let accepted = try await daemon.deliver(
                event: "workflow_run", id: "healthy-1", body: GitHubPayload.body(healthy.run("requested", at: 0)))
            #expect(accepted.status == 202)
            let healthySlug = try #require(try await daemon.read { try $0.listRuns().first?.slug })
            #expect(
                try await eventually {
                    let database = try BridgeDatabase(path: path, readOnly: true)
                    return try database.session(slug: healthySlug)?.stored.session.phase == .live
                })
            let (runs, cards) = try await daemon.read { database in
                (
                    try database.listRuns().map(\.key.repository),
                    try database.connection.query("SELECT slug FROM activities") { $0.string(0) ?? "" }
                )
            }
            #expect(runs == ["acme/widgets"])
            #expect(cards == [healthySlug])

            try await offPool {
                try SQLiteConnection(path: path).execute("DROP TRIGGER refuse_doomed")
            }
            let retried = try await daemon.deliver(event: "workflow_run", id: "doomed-1", body: doomedBody)
            #expect(retried.status == 202)
            #expect(try await daemon.read { try $0.listRuns().count } == 2)
        }
    }

    // MARK: Large bodies and slow clients

    @Test("a validly signed 25 MiB body gets a definite answer; one byte more is 413")
    func largestBody() async throws {
        let limit = 25 * 1_024 * 1_024
        try await withDaemon(configure: { $0.maxBodyBytes = limit }) { daemon in
            guard
                case .object(var root) = GitHubPayload.json(
                    WebhookIngressTests.script.job(7, "lint", "queued", createdAt: 1))
            else {
                Issue.record("the payload builder changed shape")
                return
            }
            root["padding"] = ""
            let base = JSONValue.object(root).canonicalData.count
            root["padding"] = .string(String(repeating: "x", count: limit - base))
            let body = JSONValue.object(root).canonicalData
            #expect(body.count == limit)

            let response = try await daemon.deliver(event: "workflow_job", id: "huge-1", body: body)
            #expect(response.status == 202, "\(response.text)")
            #expect(try await daemon.read { try $0.delivery(id: "huge-1")?.payloadBytes } == limit)

            let port = daemon.port
            let over = try await offPool {
                let client = try HTTPTestClient(port: port)
                try client.send(
                    HTTPTestClient.head(
                        method: "POST", target: "/webhook",
                        headers: signedHeaders(event: "workflow_job", id: "huge-2", body: body, secret: "unused"),
                        contentLength: limit + 1))
                return try client.readResponse()
            }
            #expect(over.status == 413)
        }
    }

    @Test("clients that send half a request and hold do not hold up a delivery on another connection")
    func slowClients() async throws {
        try await withDaemon { daemon in
            let port = daemon.port
            let body = WebhookIngressTests.queuedJob()
            let headers = signedHeaders(
                event: "workflow_job", id: "after-slow", body: body, secret: daemon.configuration.webhookSecrets[0])
            let (response, elapsed) = try await offPool {
                // More stalled connections than libmicrohttpd has threads: half stop inside the
                // header block, half inside the body.
                var stalled: [HTTPTestClient] = []
                for index in 0..<8 {
                    let client = try HTTPTestClient(port: port)
                    if index.isMultiple(of: 2) {
                        try client.send("POST /webhook HTTP/1.1\r\nHost: localhost\r\nX-GitHub-Ev")
                    } else {
                        let head = HTTPTestClient.head(
                            method: "POST", target: "/webhook", headers: headers, contentLength: body.count)
                        try client.send(Data(head.utf8) + body.prefix(body.count / 2))
                    }
                    stalled.append(client)
                }
                let start = Date()
                let response = try HTTPTestClient.request(
                    port: port, method: "POST", target: "/webhook", headers: headers, body: body)
                let elapsed = Date().timeIntervalSince(start)
                withExtendedLifetime(stalled) {}
                return (response, elapsed)
            }
            #expect(response.status == 202)
            #expect(elapsed < 5, "the delivery took \(elapsed) s behind stalled clients")
            #expect(try await daemon.read { try $0.listDeliveries().map(\.id) } == ["after-slow"])
        }
    }
}
