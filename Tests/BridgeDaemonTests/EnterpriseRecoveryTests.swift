import BridgeCore
import BridgeDaemon
import BridgeTestSupport
import Foundation
import Testing

/// Recovery from an Enterprise Server, which keeps deliveries 7 days: the sweep reads its log and
/// asks for what was missed that far back, not only GitHub.com's 3 days, and nothing older.
@Suite("Recovery from an Enterprise Server", .serialized, .timeLimit(.minutes(3)))
struct EnterpriseRecoveryTests {
    @Test("deliveries missed 2 and 5 days ago are asked for again; one missed 8 days ago is not")
    func sevenDayWindow() async throws {
        let directory = try RecoveryEndToEndTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pushward = try FakePushWardServer()
        // The fake's API is at http://127.0.0.1:PORT: not GitHub.com's host, so an Enterprise Server.
        let github = try FakeGitHubAPI(
            secret: RecoveryEndToEndTests.secret, credentials: .token(RecoveryEndToEndTests.token))
        #expect(GitHubAPISettings.isEnterpriseServer(apiURL: github.baseURL))
        let events = RunScript(start: Date().timeIntervalSince1970 - 600).deliveries(waves: RecoveryEndToEndTests.waves)
        let now = Date().timeIntervalSince1970
        let missed = [("eight-days", 8.0), ("five-days", 5.0), ("two-days", 2.0)]
        for (index, (guid, days)) in missed.enumerated() {
            let (name, body) = PayloadEncoder.encode(events[index])
            github.logFailedAttempt(event: name, body: body, guid: guid, deliveredAt: now - days * 86_400)
        }

        let daemon = try RecoveryEndToEndTests.start(
            database: directory + "/bridge.sqlite", pushward: pushward, github: github, logs: LineLog())
        let arrived = await DispatchEndToEndTests.eventually(timeout: 60) {
            Set(github.log.filter { $0.redelivery && $0.statusCode == 202 }.map(\.guid)) == ["five-days", "two-days"]
        }
        await daemon.shutdown()
        #expect(arrived)
        // Oldest first: had the 8-day-old delivery been in the plan, it would have been asked for
        // before the 5-day-old one.
        let eightID = try #require(github.log.first { $0.guid == "eight-days" }?.id)
        #expect(!github.requests.contains { $0.method == "POST" && $0.path.contains("/deliveries/\(eightID)/") })
        #expect(github.log.filter(\.redelivery).map(\.guid) == ["five-days", "two-days"])
    }
}
