import BridgeCore
import BridgeDaemon
import BridgeTestSupport
import Foundation
import Testing

/// Recovery with `github.api.hooks` left out and `public_url` set: the daemon finds the hook that
/// posts to `<public_url>/webhook` in the repositories of its runs, and sweeps its delivery log
/// as it would a configured one.
@Suite("Recovery finds its hooks by URL", .serialized, .timeLimit(.minutes(3)))
struct RecoveryHookDiscoveryTests {
    static let publicURL = "https://hooks.example.com"

    static func start(database: String, pushward: FakePushWardServer, github: FakeGitHubAPI, logs: LineLog)
        throws -> Daemon
    {
        let json = """
            {"listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "\(database)",
             "public_url": "\(publicURL)", "activity": {"completion_grace": "1h"},
             "github": {"webhook_secrets": ["\(RecoveryEndToEndTests.secret)"],
                        "api": {"url": "\(github.baseURL)", "token": "\(RecoveryEndToEndTests.token)",
                                "sweep_interval": "30s", "max_redeliveries_per_minute": 600, "stale_after": "1h"}},
             "pushward": {"url": "\(pushward.baseURL)", "api_key": "\(pushward.apiKey)", "end_delay": "0s",
                          "end_display_time": "0s", "min_update_interval": "0s", "fidelity": "full",
                          "coalesce": "0s", "max_updates_per_hour": 3600}}
            """
        let daemon = try Daemon.start(
            configuration: try BridgeConfiguration(json: Data(json.utf8)),
            logger: Logger(label: "test", minimumLevel: .debug, sink: { logs.append($0) }))
        github.setWebhookURL("http://127.0.0.1:\(daemon.port)/webhook")
        return daemon
    }

    @Test("deliveries missed while down come back through the hook found by its URL, and the card ends")
    func findsHookByURL() async throws {
        let script = RunScript(start: Date().timeIntervalSince1970 - 600)
        let events = script.deliveries(waves: RecoveryEndToEndTests.waves)
        let split = events.count / 3
        let directory = try ScratchDirectory()
        let pushward = try FakePushWardServer()
        let github = try FakeGitHubAPI(
            secret: RecoveryEndToEndTests.secret, credentials: .token(RecoveryEndToEndTests.token))
        // Another hook of the repository, on another URL: never swept.
        github.hookStore.add(owner: "/repos/acme/widgets", id: 9, url: "https://ci.example.com/hook")
        github.hookStore.add(
            owner: "/repos/acme/widgets", id: 1, url: Self.publicURL + "/webhook", secret: RecoveryEndToEndTests.secret)
        let logs = LineLog()
        var daemon = try Self.start(
            database: directory.path("bridge.sqlite"), pushward: pushward, github: github, logs: logs)
        #expect(await github.deliver(events.prefix(split)).allSatisfy { $0 == 202 })
        await daemon.shutdown()
        #expect(await github.deliver(events.dropFirst(split)).allSatisfy { $0 == 0 }, "nothing listens")
        daemon = try Self.start(
            database: directory.path("bridge.sqlite"), pushward: pushward, github: github, logs: logs)
        #expect(await DispatchEndToEndTests.eventually(timeout: 60) { RecoveryEndToEndTests.ended(pushward) })
        await daemon.shutdown()

        #expect(github.log.filter(\.redelivery).count == events.count - split)
        #expect(daemon.recovery.current.discoveredHooks == ["repos/acme/widgets/hooks/1"])
        #expect(logs.all.contains { $0.contains("found the hooks that post to the bridge's URL") })
        let paths = Set(github.requests.map(\.path))
        #expect(paths.contains("/repos/acme/widgets/hooks") && paths.contains("/orgs/acme/hooks"))
        #expect(!paths.contains("/repos/acme/widgets/hooks/9/deliveries"))
        #expect(github.hookStore.writes.isEmpty, "recovery only reads hooks")
    }

    @Test("no hooks listed: the start warns that missed deliveries stay lost, unless public_url lets it find them")
    func warning() throws {
        let api = #""github": {"api": {"token": "ghp_x"}}"#
        let without = try BridgeConfiguration(json: Data("{\(api)}".utf8))
        #expect(ConfigurationLoader.servingWarnings(without).contains { $0.contains("github.api lists no hooks") })
        let with = try BridgeConfiguration(json: Data(#"{"public_url": "https://hooks.example.com", \#(api)}"#.utf8))
        #expect(!ConfigurationLoader.servingWarnings(with).contains { $0.contains("github.api lists no hooks") })
    }
}
