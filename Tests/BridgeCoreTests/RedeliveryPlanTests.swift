import BridgeCore
import Foundation
import Testing

/// `RedeliveryPlan`: which logged deliveries are asked for again, in what order, and how far back
/// the next sweep reads. On a delivery log as GitHub records one (real GUIDs, GitHub's statuses).
@Suite("redelivery plan")
struct RedeliveryPlanTests {
    static let now: UnixTime = 1_800_000_000

    static func entry(
        _ id: Int, _ guid: String, ago: UnixTime, status: Int = 0, event: String = "workflow_job",
        redelivery: Bool = false
    ) -> HookDelivery {
        HookDelivery(
            id: id, guid: guid, deliveredAt: now - ago, redelivery: redelivery, statusCode: status, event: event,
            action: "completed")
    }

    @Test("a GUID the store lacks is asked for once, by its newest attempt, oldest GUID first; stored ones never")
    func missedOnly() {
        let log = [
            Self.entry(10, "a", ago: 300), Self.entry(11, "b", ago: 200, status: 502),
            Self.entry(12, "a", ago: 100, status: 503, redelivery: true), Self.entry(13, "c", ago: 50, status: 202),
            Self.entry(14, "d", ago: 40, status: 500),
        ]
        let plan = RedeliveryPlan(log: log, stored: ["c", "d"], requested: [:], sweptAt: Self.now)
        #expect(plan.redeliver.map(\.id) == [12, 11])
        #expect(plan.givenUp.isEmpty)
        // Both are waiting now: the next sweep reads back to the oldest first attempt.
        #expect(plan.examinedThrough == Self.now - 300)
    }

    @Test("other events, and what GitHub no longer keeps, are never asked for")
    func eventsAndRetention() {
        let log = [
            Self.entry(1, "push", ago: 10, event: "push"), Self.entry(2, "ping", ago: 10, event: "ping"),
            Self.entry(3, "old", ago: RedeliveryPlan.githubRetention + 1),
            Self.entry(4, "run", ago: 10, event: "workflow_run"),
        ]
        let plan = RedeliveryPlan(log: log, stored: [], requested: [:], sweptAt: Self.now)
        #expect(plan.redeliver.map(\.guid) == ["run"])
    }

    @Test("asked for recently: not again yet, still holding the sweep back; asked for the most times: given up once")
    func requestedBefore() {
        let log = [
            Self.entry(1, "recent", ago: 900), Self.entry(2, "stale", ago: 800), Self.entry(3, "spent", ago: 1_000),
            Self.entry(4, "last-in-flight", ago: 950), Self.entry(5, "said-before", ago: 2_000),
        ]
        let requested: [String: RedeliveryPlan.Requested] = [
            "recent": .init(requests: 1, lastAt: Self.now - RedeliveryPlan.retryAfter + 1),
            "stale": .init(requests: 2, lastAt: Self.now - RedeliveryPlan.retryAfter),
            "spent": .init(requests: RedeliveryPlan.maxRequests, lastAt: Self.now - 10_000),
            // The last request may still arrive: not given up yet.
            "last-in-flight": .init(requests: RedeliveryPlan.maxRequests, lastAt: Self.now - 60),
            "said-before": .init(requests: RedeliveryPlan.maxRequests, lastAt: Self.now - 10_000, givenUp: true),
        ]
        let plan = RedeliveryPlan(log: log, stored: [], requested: requested, sweptAt: Self.now)
        #expect(plan.redeliver.map(\.guid) == ["stale"])
        #expect(plan.givenUp.map(\.guid) == ["spent"])
        #expect(plan.examinedThrough == Self.now - 950, "the waiting ones hold the sweep back, the given-up ones not")
    }

    @Test("with nothing missed the next sweep reads back only to this one's start")
    func allResolved() {
        let plan = RedeliveryPlan(
            log: [Self.entry(1, "a", ago: 30, status: 202)], stored: ["a"], requested: [:], sweptAt: Self.now)
        #expect(plan.redeliver.isEmpty && plan.examinedThrough == Self.now)
        #expect(RedeliveryPlan(log: [], stored: [], requested: [:], sweptAt: Self.now).examinedThrough == Self.now)
    }

    @Test("a sweep stops reading at what the last one resolved (less the overlap) or at GitHub's edge")
    func hasReadEnough() {
        let through = Self.now - 3_600
        #expect(!RedeliveryPlan.hasReadEnough(oldest: through, examinedThrough: through, sweptAt: Self.now))
        #expect(
            RedeliveryPlan.hasReadEnough(
                oldest: through - RedeliveryPlan.overlap - 1, examinedThrough: through, sweptAt: Self.now))
        #expect(!RedeliveryPlan.hasReadEnough(oldest: Self.now - 86_400, examinedThrough: nil, sweptAt: Self.now))
        #expect(
            RedeliveryPlan.hasReadEnough(
                oldest: Self.now - RedeliveryPlan.githubRetention, examinedThrough: nil, sweptAt: Self.now))
    }

    @Test("a page of GitHub's delivery log is read entry by entry; entries missing a field are counted, not guessed")
    func pageDecoding() throws {
        let page = Data(
            """
            [{"id": 12077215967, "guid": "0b989ba4-242f-11e5-81e1-c7b6966d2516", "delivered_at": "2026-12-01T10:11:52Z",
              "redelivery": false, "duration": 0.27, "status": "Invalid HTTP Response: 503", "status_code": 503,
              "event": "workflow_job", "action": "completed", "installation_id": null, "repository_id": 1},
             {"id": 12077215968, "guid": "", "delivered_at": "2026-12-01T10:11:53Z", "event": "workflow_job"},
             {"id": 12077215969, "guid": "x", "delivered_at": "yesterday", "event": "workflow_job"}]
            """.utf8)
        let decoded = try #require(HookDelivery.page(page))
        #expect(decoded.unreadable == 2)
        #expect(
            decoded.deliveries == [
                HookDelivery(
                    id: 12_077_215_967, guid: "0b989ba4-242f-11e5-81e1-c7b6966d2516",
                    deliveredAt: try #require(GitHubTimestamp.parse("2026-12-01T10:11:52Z")), redelivery: false,
                    statusCode: 503, event: "workflow_job", action: "completed")
            ])
        #expect(HookDelivery.page(Data(#"{"message": "Not Found"}"#.utf8)) == nil)
    }
}
