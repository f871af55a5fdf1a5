import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Buttons with two instances on one PostgreSQL database: a phone's press reaches whichever
/// instance the load balancer picks, so the same token can arrive at both at once (a retry, a
/// double tap through two connections). Exactly one may act. And a press an instance recorded is
/// its own: another instance starting must not call it cut off while it is being asked of GitHub.
@Suite("High availability: actions", .serialized, .timeLimit(.minutes(4)))
struct HighAvailabilityActionTests {
    typealias Actions = ActionEndToEndTests

    /// An instance with `actions` (and alerts, so a failure's notification carries a re-run)
    /// on `uri`, listening on `port` (0: any).
    static func start(
        uri: String, port: Int = 0, pushward: FakePushWardServer, github: FakeGitHubAPI, logs: LineLog
    ) throws -> Daemon {
        let json = """
            {"listen": "127.0.0.1:\(port)", "admin_listen": "127.0.0.1:0", "database": "\(uri)",
             "alerts": {},
             "activity": {"completion_grace": "1h"},
             "actions": {"public_url": "\(Actions.publicURL)"},
             "github": {"webhook_secrets": ["\(Actions.secret)"],
                        "api": {"url": "\(github.baseURL)", "token": "\(Actions.token)"}},
             "pushward": {"url": "\(pushward.baseURL)", "api_key": "\(pushward.apiKey)", "end_delay": "0s",
                          "end_display_time": "0s", "min_update_interval": "0s", "fidelity": "full",
                          "coalesce": "0s", "max_updates_per_hour": 3600}}
            """
        return try Daemon.start(
            configuration: try BridgeConfiguration(json: Data(json.utf8)),
            logger: Logger(label: "test", minimumLevel: .debug, sink: { logs.append($0) }))
    }

    /// A press of `url` on the instance listening on `port`: its status.
    static func press(_ url: String, port: Int) async throws -> Int {
        let path = String(url.dropFirst(Actions.publicURL.count))
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = "POST"
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    static func deliver(_ events: [WebhookEvent], to github: FakeGitHubAPI) async {
        #expect(await github.deliver(events).allSatisfy { $0 == 202 })
    }

    @Test("one token pressed on both instances at the same moment, 10 rounds: one GitHub call and one 200 each")
    func samePressOnBoth() async throws {
        let uri = try await PostgresServer.makeSharedDatabase()
        let pushward = try FakePushWardServer()
        let github = try FakeGitHubAPI(secret: Actions.secret, credentials: .token(Actions.token))
        let first = try Self.start(uri: uri, pushward: pushward, github: github, logs: LineLog())
        var running = [first]
        defer { for daemon in running { Task { await daemon.shutdown() } } }
        #expect(await HighAvailabilityRecoveryTests.within(15) { await HighAvailabilityRecoveryTests.leads(first) })
        let second = try Self.start(uri: uri, pushward: pushward, github: github, logs: LineLog())
        running.append(second)
        github.setWebhookURL("http://127.0.0.1:\(first.port)/webhook")

        var answers: [[Int]] = []
        for round in 0..<10 {
            let runID = 300 + round
            await Self.deliver(Actions.script(runID).deliveries(waves: Actions.failing), to: github)
            #expect(await pushward.until { pushward.acceptedNotifications.count == round + 1 })
            let action = try #require(pushward.acceptedNotifications.last?.body["actions"]?.arrayValue?.first)
            #expect(action["id"] == "rerun")
            let url = try #require(action["url"]?.stringValue)
            async let onFirst = Self.press(url, port: first.port)
            async let onSecond = Self.press(url, port: second.port)
            let statuses = try await [onFirst, onSecond]
            answers.append(statuses)
            #expect(statuses.sorted() == [200, 404], "round \(round): \(statuses)")
            #expect(
                github.actions.filter { $0.path == Actions.rerunPath(runID) }.count == 1,
                "round \(round): one call to GitHub")
            // The press is the answering instance's own, by name.
            let audit = try BridgeDatabase(location: .postgresql(uri: uri)).actions(
                repository: "acme/widgets", runID: runID)
            #expect(audit.count == 1)
            let winner = statuses[0] == 200 ? first : second
            #expect(audit.first?.instance == winner.service.settings.instance)
            // Either instance's admin API names it.
            let document = try JSONValue(
                parsing: Data(try await AlertEndToEndTests.get("/api/runs/\(runID)", port: second.adminPort).utf8))
            let recorded = document.arrayValue?.first?["actions"]?.arrayValue?.first
            #expect(recorded?["instance"] == .string(winner.service.settings.instance))
        }
        #expect(github.actions.count == 10)
        let wins = answers.map { $0[0] == 200 ? "first" : "second" }
        let ok = answers.joined().filter { $0 == 200 }.count
        print(
            "high availability: \(answers.count) simultaneous double presses, \(github.actions.count) GitHub calls, "
                + "\(ok) × 200; won by \(wins)")
        #expect(pushward.violations.isEmpty, "\(pushward.violations)")
        for daemon in running { await daemon.shutdown() }
        running = []
    }

    @Test("two copies of one action (the card's and the notification's) pressed on both instances at once: one call")
    func copiesOnBoth() async throws {
        let uri = try await PostgresServer.makeSharedDatabase()
        let pushward = try FakePushWardServer()
        let github = try FakeGitHubAPI(secret: Actions.secret, credentials: .token(Actions.token))
        let logs = (LineLog(), LineLog())
        let first = try Self.start(uri: uri, pushward: pushward, github: github, logs: logs.0)
        var running = [first]
        defer { for daemon in running { Task { await daemon.shutdown() } } }
        #expect(await HighAvailabilityRecoveryTests.within(15) { await HighAvailabilityRecoveryTests.leads(first) })
        let second = try Self.start(uri: uri, pushward: pushward, github: github, logs: logs.1)
        running.append(second)
        github.setWebhookURL("http://127.0.0.1:\(first.port)/webhook")

        var previousCard: String?
        for round in 0..<5 {
            let runID = 400 + round
            await Self.deliver(Actions.script(runID).deliveries(waves: Actions.failing), to: github)
            #expect(await pushward.until { pushward.acceptedNotifications.count == round + 1 })
            let alertURL = try #require(
                pushward.acceptedNotifications.last?.body["actions"]?.arrayValue?.first?["url"]?.stringValue)
            // This round's run's button: on a loaded machine the card may still show an earlier
            // round's run, whose button a press re-issues.
            func cardButton() -> String? {
                guard let content = pushward.activities[RecoveryEndToEndTests.slug]?.content,
                    content["url"]?.stringValue?.contains("/runs/\(runID)") == true,
                    let button = content["secondary_url_action"],
                    button["title"] == "Re-run failed jobs", let url = button["url"]?.stringValue, url != previousCard
                else { return nil }
                return url
            }
            #expect(await pushward.until { cardButton() != nil })
            let cardURL = try #require(cardButton())
            previousCard = cardURL
            async let onFirst = Self.press(alertURL, port: first.port)
            async let onSecond = Self.press(cardURL, port: second.port)
            let statuses = try await [onFirst, onSecond]
            #expect(statuses.sorted() == [200, 404], "round \(round): \(statuses)")
            #expect(github.actions.filter { $0.path == Actions.rerunPath(runID) }.count == 1, "round \(round)")
        }
        #expect(github.actions.count == 5)
        let errors = (logs.0.all + logs.1.all).filter { $0.contains("could not check a pressed button") }
        #expect(errors.isEmpty, "a deadlock between two copies is retried, not an error: \(errors)")
        for daemon in running { await daemon.shutdown() }
        running = []
    }

    @Test("at start an instance marks only its own cut-off presses interrupted; the other's stay asked")
    func interruptOwnOnly() async throws {
        let uri = try await PostgresServer.makeSharedDatabase()
        let pushward = try FakePushWardServer()
        let github = try FakeGitHubAPI(secret: Actions.secret, credentials: .token(Actions.token))
        let ports = (try PostgresServer.freePort(), try PostgresServer.freePort())
        var first = try Self.start(uri: uri, port: ports.0, pushward: pushward, github: github, logs: LineLog())
        let second = try Self.start(uri: uri, port: ports.1, pushward: pushward, github: github, logs: LineLog())
        let names = (first.service.settings.instance, second.service.settings.instance)
        #expect(names.0 == Daemon.instanceName(listen: "127.0.0.1:\(ports.0)"))
        #expect(names.0 != names.1)

        // One press each, still being asked of GitHub when the first instance stops.
        let database = try BridgeDatabase(location: .postgresql(uri: uri))
        let binding = ActionBinding(
            kind: .cancel, run: RunKey(repository: "acme/widgets", runID: 1, attempt: 1), environment: nil,
            recipient: nil, surface: "card gh-1", createdAt: 1_000, expiresAt: 4_600)
        let ids = try database.write { database in
            (
                try database.insertAction(
                    binding, person: "octocat", state: .requested, detail: nil, instance: names.0, at: 1_001),
                try database.insertAction(
                    binding, person: "hubot", state: .requested, detail: nil, instance: names.1, at: 1_002)
            )
        }
        await first.shutdown()
        let logs = LineLog()
        first = try Self.start(uri: uri, port: ports.0, pushward: pushward, github: github, logs: logs)
        #expect(first.service.settings.instance == names.0, "the same instance, at the same address, after its restart")
        let states = Dictionary(
            uniqueKeysWithValues: try database.actions(repository: "acme/widgets", runID: 1).map { ($0.id, $0.state) })
        #expect(states[ids.0] == .interrupted, "its own press, cut off by its stop")
        #expect(states[ids.1] == .requested, "the other instance may still be asking GitHub")
        #expect(logs.all.filter { $0.contains("cut off by a stop") }.count == 1)

        await second.shutdown()
        let restarted = try Self.start(uri: uri, port: ports.1, pushward: pushward, github: github, logs: LineLog())
        #expect(
            try database.actions(repository: "acme/widgets", runID: 1).map(\.state) == [.interrupted, .interrupted])
        await restarted.shutdown()
        await first.shutdown()
    }
}
