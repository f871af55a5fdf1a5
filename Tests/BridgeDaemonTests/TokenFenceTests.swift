import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeDaemon

/// Tokens are minted by the leader (its dispatcher is the one that sends), so their insert is a
/// leader write and carries the fence: a leader deposed while it armed a notification stores no
/// token, sends no button, and steps down.
@Suite("token inserts carry the fence", .serialized, .timeLimit(.minutes(1)))
struct TokenFenceTests {
    static let publicURL = "https://hooks.example.com/bridge"

    static func tokenCount(_ database: BridgeDatabase) throws -> Int {
        try database.store.query("SELECT count(*) FROM action_tokens") { $0.int(0) ?? 0 }.first ?? 0
    }

    @Test("a leader mints under its epoch; after another instance took the lead its insert fails and it steps down")
    func deposedLeaderMintsNothing() async throws {
        let uri = try await PostgresServer.makeSharedDatabase()
        // The service owns its connection; the test reads through one of its own.
        let database = try BridgeDatabase(location: .postgresql(uri: uri))
        let configuration = try BridgeConfiguration(
            json: Data(
                """
                {"database": "\(uri)", "actions": {"public_url": "\(Self.publicURL)"},
                 "github": {"webhook_secrets": ["fence-secret-0123456"],
                            "api": {"url": "http://127.0.0.1:1", "token": "ghp_fence"}}}
                """.utf8))
        let logs = LineLog()
        let service = BridgeService(
            database: try BridgeDatabase(location: .postgresql(uri: uri)),
            engine: EngineLoader(configuration: configuration).empty(),
            configuration: configuration, logger: Logger(label: "test", sink: { logs.append($0) }))
        let settings = try #require(configuration.actions)
        let mint = ActionMint(
            service: service, actions: settings, logger: Logger(label: "test", sink: { logs.append($0) }),
            metrics: Metrics())
        let alert = AlertRecord(
            id: 7, run: RunKey(repository: "acme/widgets", runID: 1, attempt: 1), reason: .failure, body: "{}",
            activitySlug: nil, createdAt: 1_000, state: .pending, attempts: 0, nextAttemptAt: 1_000,
            lastAttemptAt: nil, status: nil, detail: nil, notificationID: nil, delivery: nil, sentAt: nil)
        let body: JSONValue = ["title": "CI failed", "actions": [settings.notificationAction(.rerun)]]

        let first = LeaderLease(uri: uri, holder: "host-a:101")
        let second = LeaderLease(uri: uri, holder: "host-b:202")
        defer {
            first.close()
            second.close()
        }
        #expect(try first.poll() == .leading(epoch: 1))
        service.roleChanged(to: .leading(epoch: 1))
        let led = await mint.armed(alert, body: body, at: 1_000)
        let url = try #require(led["actions"]?.arrayValue?.first?["url"]?.stringValue)
        #expect(url.hasPrefix(Self.publicURL + "/actions/") && !url.contains("{"), "a real token while leading")
        #expect(try Self.tokenCount(database) == 1)

        // Another instance takes the lead; this one has not heard yet.
        first.stepDown()
        #expect(try second.poll() == .leading(epoch: 2))
        let deposed = await mint.armed(alert, body: body, at: 1_001)
        #expect(deposed["actions"] == nil, "no button whose token was never stored")
        #expect(try Self.tokenCount(database) == 1, "the deposed leader's insert was refused")
        #expect(logs.all.contains { $0.contains("minting a button's token found another instance leading") })
        #expect(await service.leaderEpoch == nil, "it stepped down")
    }
}
