import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Routing through the whole daemon against the fake PushWard, which takes `target` from an
/// organisation key and answers 422 to it from a personal one, as PushWard does.
@Suite("Routing end to end", .serialized, .timeLimit(.minutes(2)))
struct RoutingEndToEndTests {
    typealias Bridge = DispatchEndToEndTests.Bridge
    static let routed = #""alerts": {}, "routing": {"members": {"octocat": "usr_123"}},"#
    static var personalSlug: String {
        DispatchEndToEndTests.slug + "-u" + SHA256.hexDigest(of: "octocat").prefix(8)
    }

    static func failingRun(_ runID: Int) -> [WebhookEvent] {
        RunScript(runID: runID, runNumber: runID, start: Date().timeIntervalSince1970 - 900, firstJobID: runID * 100)
            .deliveries(waves: AlertEndToEndTests.failing)
    }

    @Test("an organisation key: the person's own card and their alert both carry target")
    func organisationKey() async throws {
        let fake = try FakePushWardServer()
        fake.setKeyKind(.organisation)
        let bridge = try Bridge(fake: fake, topLevel: Self.routed)
        for event in Self.failingRun(1) { #expect(try await bridge.deliver(event) == 202) }
        #expect(await DispatchEndToEndTests.eventually { fake.acceptedNotifications.count == 1 })
        #expect(await DispatchEndToEndTests.eventually { fake.activities[Self.personalSlug]?.state == "ended" })
        let port = bridge.daemon.adminPort
        let (document, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/api/runs/1")!)
        let (page, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/")!)
        await bridge.daemon.shutdown()
        #expect(try JSONValue(parsing: document).arrayValue?.first?["target"] == ["members": ["usr_123"]])
        #expect(String(decoding: page, as: UTF8.self).contains("→ members usr_123"))
        let create = try #require(fake.requests.first { $0.method == "POST" && $0.path == "/activities" })
        #expect(create.body?["slug"] == .string(Self.personalSlug))
        #expect(create.body?["target"] == ["members": ["usr_123"]])
        #expect(fake.acceptedNotifications.first?.body["target"] == ["members": ["usr_123"]])
        #expect(fake.acceptedNotifications.first?.body["activity_slug"] == .string(Self.personalSlug))
        let alert = try #require(
            try BridgeDatabase(path: bridge.databasePath, readOnly: true).alerts(repository: "acme/widgets", runID: 1)
                .first)
        #expect(AlertSummary.audience(alert) == "members usr_123")
        #expect(fake.violations.isEmpty, "\(fake.violations)")
    }

    @Test("a personal key: the target is refused once, said once; the card and the alert go without it")
    func personalKey() async throws {
        let fake = try FakePushWardServer()
        let bridge = try Bridge(fake: fake, topLevel: Self.routed)
        for event in Self.failingRun(2) { #expect(try await bridge.deliver(event) == 202) }
        #expect(await DispatchEndToEndTests.eventually { fake.acceptedNotifications.count == 1 })
        #expect(await DispatchEndToEndTests.eventually { fake.activities[Self.personalSlug]?.state == "ended" })
        // A second routed run after the refusal: no target tried again.
        for event in Self.failingRun(3) { try await bridge.deliver(event) }
        #expect(await DispatchEndToEndTests.eventually { fake.acceptedNotifications.count == 2 })
        let port = bridge.daemon.adminPort
        let (page, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/")!)
        let (metrics, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        await bridge.daemon.shutdown()

        let withTarget = fake.requests.filter { $0.body?["target"] != nil }
        #expect(withTarget.count == 1, "tried once")
        #expect(withTarget.first?.status == 422)
        #expect(fake.acceptedNotifications.allSatisfy { $0.body["target"] == nil })
        let alert = try #require(
            try BridgeDatabase(path: bridge.databasePath, readOnly: true).alerts(repository: "acme/widgets", runID: 2)
                .first)
        #expect(AlertSummary.audience(alert) == "everyone the key reaches", "the record says what went out")
        #expect(
            bridge.logs.all.filter { $0.contains("PushWard refused a routing target") }.count == 1, "said once")
        #expect(String(decoding: page, as: UTF8.self).contains("class=\"notice\""))
        #expect(String(decoding: metrics, as: UTF8.self).contains("routing_targets_refused 1"))
    }
}
