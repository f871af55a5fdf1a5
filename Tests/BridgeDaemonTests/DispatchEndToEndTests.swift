import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import PushWardClient
import Testing
import WebhookServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The dispatcher against a real HTTP PushWard on loopback (the in-repo fake, which answers 422 to
/// whatever the real server rejects): outages, rate limits, quota, deleted activities, refusals.
@Suite("Dispatch end to end", .serialized, .timeLimit(.minutes(2)))
struct DispatchEndToEndTests {
    static let secret = "dispatch-secret-0123"

    /// A daemon in this process, with its own database, delivering to `fake`.
    final class Bridge: @unchecked Sendable {
        let daemon: Daemon
        let directory: String
        let databasePath: String
        let logs = LineLog()

        /// Every change pushed at once unless `economy` says otherwise (a JSON fragment of
        /// `pushward` keys); `topLevel` adds top-level keys (a fragment ending in a comma).
        static let everyChange = #""fidelity": "full", "coalesce": "0s", "max_updates_per_hour": 3600"#

        /// `clock`: the daemon's time (`Daemon.init`), the wall clock unless a test holds it.
        convenience init(
            fake: FakePushWardServer, minUpdateInterval: String = "0s", economy: String = everyChange,
            topLevel: String = "", clock: @escaping @Sendable () -> UnixTime = { Date().timeIntervalSince1970 }
        ) throws {
            try self.init(
                url: fake.baseURL, apiKey: fake.apiKey, minUpdateInterval: minUpdateInterval, economy: economy,
                topLevel: topLevel, clock: clock)
        }

        init(
            url: String, apiKey: String, minUpdateInterval: String = "0s", economy: String = everyChange,
            topLevel: String = "", clock: @escaping @Sendable () -> UnixTime = { Date().timeIntervalSince1970 }
        ) throws {
            directory = NSTemporaryDirectory() + "dispatch-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            databasePath = directory + "/bridge.sqlite"
            let json = """
                {\(topLevel) "listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "\(databasePath)",
                 "github": {"webhook_secrets": ["\(DispatchEndToEndTests.secret)"]},
                 "pushward": {"url": "\(url)", "api_key": "\(apiKey)", "end_delay": "0s",
                              "end_display_time": "0s", "min_update_interval": "\(minUpdateInterval)",
                              \(economy)}}
                """
            let configuration = try BridgeConfiguration(json: Data(json.utf8))
            let logs = logs
            daemon = try Daemon.start(
                configuration: configuration,
                logger: Logger(label: "test", minimumLevel: .debug, sink: { logs.append($0) }), clock: clock)
        }

        /// Stops the daemon too (a second stop does nothing), so a test that failed before its
        /// own shutdown leaves no daemon serving, with its listeners and database, for the rest of
        /// the run.
        deinit {
            let (daemon, directory) = (daemon, directory)
            Thread.detachNewThread {
                daemon.stop()
                try? FileManager.default.removeItem(atPath: directory)
            }
        }

        /// Posts one signed delivery and returns the status.
        @discardableResult
        func deliver(_ event: WebhookEvent, id: String = UUID().uuidString) async throws -> Int {
            try await DispatchEndToEndTests.deliver(event, port: daemon.port, id: id)
        }

        /// Whether the fake holds the card `slug` as the daemon last stored it desired: `ended` once
        /// the run is final, and every content field the daemon wants with the value it wants. False
        /// while the daemon has not stored the card yet.
        func isShown(_ slug: String, on fake: FakePushWardServer) -> Bool {
            guard let database = try? BridgeDatabase(path: databasePath, readOnly: true),
                let desired = (try? database.session(slug: slug))??.stored.desired,
                let content = desired["content"]?.objectValue, let shown = fake.activities[slug]
            else { return false }
            if desired["final"] == true, shown.state != "ended" { return false }
            return content.allSatisfy { key, value in
                value == .null ? shown.content[key] == nil : shown.content[key] == value
            }
        }

        func card(_ slug: String) throws -> ActivitySession? {
            let database = try BridgeDatabase(path: databasePath, readOnly: true)
            return try database.session(slug: slug)?.stored.session
        }
    }

    /// Posts one delivery signed with `secret` to the webhook listener on `port`; returns the status.
    ///
    /// Each on a connection of its own, as GitHub sends them: a keep-alive connection left idle for
    /// the listener's 15 s timeout (a test waiting out the pacer's 15 s window) is closed by the
    /// server just as the client may reuse it, and the delivery fails with a broken pipe.
    @discardableResult
    static func deliver(_ event: WebhookEvent, port: Int, id: String = UUID().uuidString) async throws -> Int {
        var request = SignedDelivery.request(event, port: port, secret: secret, id: id)
        request.setValue("close", forHTTPHeaderField: "Connection")
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    static let script = RunScript(start: Date().timeIntervalSince1970 - 600)
    static let waves: [[RunScript.Job]] = [
        [RunScript.Job("lint", duration: 20)],
        [RunScript.Job("test (a)", duration: 60), RunScript.Job("test (b)", duration: 90)],
        [RunScript.Job("deploy", duration: 30)],
    ]
    static var slug: String {
        ActivityIdentity.forRun(repository: script.repository, workflow: "CI", scope: .repository).slug
    }

    /// Polls `condition` every 50 ms for up to `timeout` seconds.
    static func eventually(timeout: Double = 20, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }

    static func finalCard(_ fake: FakePushWardServer) -> StoredActivity? { fake.activities[slug] }

    /// - Parameter allowingNotFound: a test that deletes the activity expects the fake to log its 404.
    static func expectEndedSuccess(_ fake: FakePushWardServer, allowingNotFound: Bool = false) throws {
        let card = try #require(finalCard(fake))
        #expect(card.state == "ended")
        #expect(card.content["current_step"] == card.content["total_steps"])
        #expect(card.content["total_steps"] == 3)
        #expect(card.content["progress"] == 1)
        #expect(card.content["accent_color"] == "green")
        #expect(card.content["state"] == "Succeeded")
        #expect(fake.violations.filter { !allowingNotFound || $0.rule != "activity.not_found" }.isEmpty)
        #expect(!fake.requests.contains { $0.status == 422 })
    }

    @Test("a recorded-shape run ends ended, last step, full progress, green, no 422; windows only on step changes")
    func wholeRun() async throws {
        let fake = try FakePushWardServer()
        let bridge = try Bridge(fake: fake)
        // A first run gives history, so the second one carries live windows.
        for event in Self.script.deliveries(waves: Self.waves) { try await bridge.deliver(event) }
        #expect(await Self.eventually { Self.finalCard(fake)?.state == "ended" })
        let second = RunScript(
            runID: 9_100, runNumber: 43, start: Date().timeIntervalSince1970 - 300, firstJobID: 70_000)
        let before = fake.requests.count
        for event in second.deliveries(waves: Self.waves) {
            #expect(try await bridge.deliver(event) == 202)
            // The second step reaches PushWard while its jobs are queued, before any of them
            // starts. The run is scripted minutes in the past, so only a step not yet started
            // (its window counts from when it is sent) has time left to count down; a step frame
            // sent after a job's start in the past carries no window. Waiting later, after the
            // first start, failed so on a loaded machine: the dispatcher's turn came after it.
            if case .workflowJob(let job) = event, job.action == "queued", job.job.name == "test (b)" {
                #expect(
                    await Self.eventually {
                        fake.requests.dropFirst(before).contains {
                            $0.method == "PATCH" && $0.body?["content"]?["current_step"] == 2
                        }
                    }, "the second step's frame was sent")
            }
        }
        #expect(
            await Self.eventually { Self.finalCard(fake)?.state == "ended" && fake.requests.count > before + 3 })
        await bridge.daemon.shutdown()
        try Self.expectEndedSuccess(fake)

        // Every request carrying a duration moved the step; none other did.
        var step: JSONValue?
        var windows = 0
        for request in fake.requests.dropFirst(before) where request.method == "PATCH" {
            guard let content = request.body?["content"]?.objectValue else { continue }
            let newStep = content["current_step"] ?? step
            if content["duration"] != nil {
                #expect(newStep != step)
                windows += 1
            }
            step = newStep
        }
        #expect(windows >= 1)
        // Headers the real server needs.
        let patch = try #require(fake.requests.first { $0.method == "PATCH" })
        #expect(patch.headers["content-type"] == "application/merge-patch+json")
        #expect(patch.headers["user-agent"]?.hasPrefix("pushward-bridge/") == true)
        #expect(patch.headers["authorization"] == "Bearer \(fake.apiKey)")
    }

    @Test("PushWard down mid-run, then back: the same final card, and a short catch-up, not a backlog")
    func outage() async throws {
        let fake = try FakePushWardServer()
        let bridge = try Bridge(fake: fake)
        let events = Self.script.deliveries(waves: Self.waves)
        let half = events.count / 2
        for event in events.prefix(half) { try await bridge.deliver(event) }
        // The card is showing before PushWard goes away. On what the fake stores, not a count of
        // requests: a dispatcher whose turn comes late sends the first half as one frame, and a
        // count it never reaches waited out the time limit. Not a window either: in a whole-suite
        // run the dispatcher's turn can come later than 20 s. (A created activity starts ended
        // and empty: ongoing is the first frame's.)
        #expect(await fake.until { Self.finalCard(fake)?.state == "ongoing" })
        let port = fake.port
        fake.stop()
        for event in events.dropFirst(half).dropLast() { #expect(try await bridge.deliver(event) == 202) }
        try await Task.sleep(for: .seconds(2))
        try fake.start(port: port)
        let afterRecovery = fake.requests.count
        try await bridge.deliver(events.last!)
        #expect(
            await fake.until {
                Self.finalCard(fake)?.state == "ended" && Self.finalCard(fake)?.content["state"] == "Succeeded"
            })
        await bridge.daemon.shutdown()
        try Self.expectEndedSuccess(fake)
        // Latest state, then the two end frames: a handful, whatever happened during the outage.
        #expect(
            fake.requests.count - afterRecovery <= 5, "requests after recovery: \(fake.requests.count - afterRecovery)")
    }

    @Test("PushWard answering 503 for a while: retried with backoff, the same final card, nothing rejected")
    func serviceUnavailable() async throws {
        let fake = try FakePushWardServer()
        fake.setFault { _, _, index in
            (2...5).contains(index) ? .status(503, code: "service.unavailable", detail: "maintenance") : nil
        }
        let bridge = try Bridge(fake: fake)
        for event in Self.script.deliveries(waves: Self.waves) { try await bridge.deliver(event) }
        #expect(await Self.eventually(timeout: 40) { Self.finalCard(fake)?.state == "ended" })
        await bridge.daemon.shutdown()
        try Self.expectEndedSuccess(fake)
        let requests = fake.requests
        #expect(requests.filter { $0.status == 503 }.count == 4)
        // Backoff: the retries spread out instead of hammering.
        let failures = requests.enumerated().filter { $0.element.status == 503 }.map(\.offset)
        let last = try #require(failures.last)
        #expect(requests[last + 1].at - requests[last].at >= 0.5)
    }

    @Test("429 with Retry-After is honoured")
    func rateLimited() async throws {
        let fake = try FakePushWardServer()
        fake.setFault { method, _, index in
            index == 2 ? .status(429, code: "rate_limit.exceeded", retryAfter: 2) : nil
        }
        let bridge = try Bridge(fake: fake)
        for event in Self.script.deliveries(waves: Self.waves) { try await bridge.deliver(event) }
        #expect(await Self.eventually(timeout: 30) { Self.finalCard(fake)?.state == "ended" })
        await bridge.daemon.shutdown()
        try Self.expectEndedSuccess(fake)
        let requests = fake.requests
        let limited = try #require(requests.firstIndex { $0.status == 429 })
        #expect(requests[limited + 1].at - requests[limited].at >= 1.9)
    }

    @Test("an exhausted quota pauses every request until it resets, then the latest state goes out")
    func quota() async throws {
        let fake = try FakePushWardServer()
        let resetAt = Date().timeIntervalSince1970 + 3
        fake.setFault { _, _, index in
            index == 2 ? .status(429, code: "quota.exceeded", detail: "250 updates used", resetAt: resetAt) : nil
        }
        let bridge = try Bridge(fake: fake)
        for event in Self.script.deliveries(waves: Self.waves) { try await bridge.deliver(event) }
        try await Task.sleep(for: .seconds(1))
        #expect(fake.requests.count == 3, "nothing is sent while the quota is spent")
        #expect(bridge.logs.all.filter { $0.contains("quota exhausted") }.count == 1)
        #expect(await Self.eventually(timeout: 30) { Self.finalCard(fake)?.state == "ended" })
        await bridge.daemon.shutdown()
        try Self.expectEndedSuccess(fake)
        let resumed = try #require(fake.requests.dropFirst(3).first)
        #expect(resumed.at >= resetAt - 0.1)
    }

    @Test("a deleted activity (404 on PATCH) is created again and sent whole")
    func recreatesDeletedActivity() async throws {
        let fake = try FakePushWardServer()
        let bridge = try Bridge(fake: fake)
        let events = Self.script.deliveries(waves: Self.waves)
        for event in events.prefix(4) { try await bridge.deliver(event) }
        #expect(await Self.eventually { fake.activities[Self.slug]?.state == "ongoing" })
        fake.deleteActivity(Self.slug)
        for event in events.dropFirst(4) { try await bridge.deliver(event) }
        #expect(await Self.eventually(timeout: 30) { Self.finalCard(fake)?.state == "ended" })
        await bridge.daemon.shutdown()
        try Self.expectEndedSuccess(fake, allowingNotFound: true)
        let requests = fake.requests
        let notFound = try #require(requests.firstIndex { $0.status == 404 })
        #expect(requests[notFound + 1].method == "POST")
        let full = try #require(requests[notFound + 2].body?["content"]?.objectValue)
        #expect(Set(full.keys).isSuperset(of: Set(Reconciler.ownedFields)))
    }

    @Test("a 422 is recorded on the card, never resent, and the next different state goes out whole")
    func rejectedBodyIsNotResent() async throws {
        let fake = try FakePushWardServer()
        fake.setFault { method, _, index in
            index == 3 ? .status(422, code: "activity.content_invalid", detail: "step_rows[1]: injected") : nil
        }
        let bridge = try Bridge(fake: fake)
        for event in Self.script.deliveries(waves: Self.waves) { try await bridge.deliver(event) }
        #expect(await Self.eventually(timeout: 30) { Self.finalCard(fake)?.state == "ended" })
        await bridge.daemon.shutdown()
        let requests = fake.requests
        let rejected = try #require(requests.firstIndex { $0.status == 422 })
        #expect(!requests.dropFirst(rejected + 1).contains { $0.body == requests[rejected].body })
        let next = try #require(requests[rejected + 1].body?["content"]?.objectValue)
        #expect(Set(next.keys).isSuperset(of: Set(Reconciler.ownedFields)), "the frame after a refusal is whole")
        let card = try #require(try bridge.card(Self.slug))
        #expect(card.lastProblem?.contains("step_rows[1]: injected") == true)
        #expect(bridge.logs.all.filter { $0.contains("rejected a request") }.count == 1)
    }

    @Test("a wrong key (401) is said plainly, paused, and nothing is lost")
    func unauthorized() async throws {
        let fake = try FakePushWardServer(apiKey: "hlk_right")
        let bridge = try Bridge(url: fake.baseURL, apiKey: "hlk_wrong")
        for event in Self.script.deliveries(waves: Self.waves).prefix(3) { try await bridge.deliver(event) }
        #expect(await Self.eventually { fake.requests.contains { $0.status == 401 } })
        try await Task.sleep(for: .milliseconds(500))
        await bridge.daemon.shutdown()
        #expect(fake.requests.count == 1, "after a 401 nothing more is sent until the pause ends")
        #expect(bridge.logs.all.contains { $0.contains("refused the API key (401)") })
    }

    @Test("a key without the activity:manage scope (403) is said plainly, paused, and nothing more goes")
    func forbidden() async throws {
        let fake = try FakePushWardServer()
        fake.setFault { _, _, _ in .status(403, code: "auth.forbidden", detail: "missing scope activity:manage") }
        let bridge = try Bridge(fake: fake)
        for event in Self.script.deliveries(waves: Self.waves).prefix(3) { try await bridge.deliver(event) }
        #expect(await Self.eventually { fake.requests.contains { $0.status == 403 } })
        try await Task.sleep(for: .milliseconds(500))
        await bridge.daemon.shutdown()
        #expect(fake.requests.count == 1, "after a 403 nothing more is sent until the pause ends")
        #expect(bridge.logs.all.contains { $0.contains("refused the API key (403)") })
    }

    @Test("deliveries shuffled and duplicated: the same final card, and about as many requests as in order")
    func shuffledAndDuplicated() async throws {
        let events = Self.script.deliveries(waves: Self.waves)
        func replay(_ order: [(WebhookEvent, String)]) async throws -> (StoredActivity?, Int) {
            let fake = try FakePushWardServer()
            let bridge = try Bridge(fake: fake, minUpdateInterval: "1s")
            for (event, id) in order { _ = try await bridge.deliver(event, id: id) }
            // Every delivery is committed (each was answered), so the daemon's desired card is
            // final: wait, on the fake's requests, until PushWard shows it. A card that ended before
            // late deliveries arrived shows them after its correction, which waits out the throttle
            // window and, on a loaded machine, the dispatcher's turn: no quiet period measured in
            // seconds tells that apart from a daemon that has nothing more to send.
            #expect(await fake.until { bridge.isShown(Self.slug, on: fake) })
            await bridge.daemon.shutdown()
            #expect(fake.violations.isEmpty)
            return (Self.finalCard(fake), fake.requests.count)
        }
        let inOrder = events.enumerated().map { ($0.element, "d-\($0.offset)") }
        let (expected, count) = try await replay(inOrder)
        #expect(expected?.state == "ended")
        // The same orders `ShuffledReplayTests` plays through the pure core.
        for shuffled in ShuffledReplay.orders(count: inOrder.count, seed: 7, rounds: 2) {
            let (card, requests) = try await replay(shuffled.order.map { inOrder[$0] })
            #expect(card == expected, "\(shuffled.description)")
            #expect(requests <= count + 3, "in order \(count), shuffled \(requests); \(shuffled.description)")
        }
    }
}
