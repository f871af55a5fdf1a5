import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

/// The in-memory PushWard's Live Activity update quota, without HTTP: what counts, when it
/// refuses, when it starts again, and what `/auth/me` says (spec/PUSHWARD-MORE.md §1 and §7).
@Suite struct FakeQuotaTests {
    /// 2026-12-15T12:00:00Z: the next reset crosses a year.
    private let now = GitHubTimestamp.parse("2026-12-15T12:00:00Z")!
    private let post = PushWardRequest(method: .post, slug: "ci", body: ["slug": "ci", "name": "CI", "priority": 5])
    private let patch = PushWardRequest(
        method: .patch, slug: "ci",
        body: [
            "state": "ongoing", "content": ["template": "steps", "progress": 0.5, "total_steps": 2, "current_step": 1],
        ]
    )

    private func readUsage(_ server: inout InMemoryPushWard, at time: UnixTime) throws -> PushWardUsage {
        try PushWardUsage.decode(server.usageDocument(at: time).canonicalData).get()
    }

    /// The reset a test times from the refusal: set by the first refusal only, to the whole second.
    @Test func resetTimedFromTheFirstRefusal() {
        var quota = FakeQuota(used: 2, limit: 2, resetsAt: now + 3_600)
        quota.resetsAfterRefusal = 3
        let spent = quota.isSpent(at: now + 0.25)
        #expect(spent)
        let first = quota.exceededProblem(at: now + 0.25)
        #expect(quota.resetsAt == now + 4)
        #expect(first.retryAfter == 4)
        #expect(first.body["reset_at"]?.stringValue == "2026-12-15T12:00:04Z")
        _ = quota.exceededProblem(at: now + 2)
        #expect(quota.resetsAt == now + 4, "a later refusal leaves it")
        let spentAtReset = quota.isSpent(at: now + 4)
        #expect(!spentAtReset, "the period starts again at the reset")
    }

    @Test func unlimitedByDefaultAndCountsOnlyAcceptedUpdates() throws {
        var server = InMemoryPushWard()
        #expect(server.handle(patch, at: now) == 404)
        #expect(server.handle(post, at: now) == 201)
        #expect(server.handle(patch, at: now) == 200)
        let invalid = PushWardRequest(method: .patch, slug: "ci", body: ["content": ["progress": 2]])
        #expect(server.handle(invalid, at: now) == 422)
        #expect(server.quota.used == 2)

        let usage = try readUsage(&server, at: now)
        #expect(usage.liveActivityUpdatesUsed == 2)
        #expect(usage.liveActivityUpdatesLimit == nil)
        #expect(usage.subscribed == true)
        #expect(server.usageDocument(at: now)["live_activity_updates_limit"] == nil)
        #expect(usage.quotaResetsAt == GitHubTimestamp.parse("2027-01-01T00:00:00Z"))
        #expect(usage.quotaPeriodMonth == 202_612)
        #expect(try readUsage(&server, at: now).liveActivityUpdatesUsed == 2, "reading is free")
    }

    @Test func refusesOnceTheLimitIsReachedWithoutApplying() throws {
        var server = InMemoryPushWard()
        server.quota = FakeQuota(limit: 2, resetsAt: now + 60)
        #expect(server.handle(post, at: now) == 201)
        #expect(server.handle(patch, at: now) == 200)
        let end = PushWardRequest(method: .patch, slug: "ci", body: ["state": "ended"])
        #expect(server.handle(end, at: now + 1) == 429)
        #expect(server.handle(post, at: now + 1) == 429)
        #expect(server.activities["ci"]?.state == "ongoing")
        #expect(server.log.map(\.status) == [201, 200, 429, 429])
        #expect(server.violations.isEmpty, "a spent quota is not the bridge breaking the contract")
        #expect(server.quota.used == 2)

        let (body, retryAfter) = server.quota.exceededProblem(at: now + 1)
        #expect(retryAfter == 59)
        #expect(body["code"] == "quota.exceeded")
        #expect(body["kind"] == "live_activity_updates")
        #expect(body["used"] == 2 && body["limit"] == 2)
        #expect(body["reset_at"] == .string(GitHubTimestamp.format(now + 60)))
        #expect(try readUsage(&server, at: now + 1).liveActivityUpdatesRemaining == 0)
    }

    @Test func startsAgainAtTheResetAndMovesItToTheNextMonth() throws {
        var server = InMemoryPushWard()
        server.quota = FakeQuota(limit: 1, resetsAt: now + 10)
        #expect(server.handle(post, at: now) == 201)
        #expect(server.handle(patch, at: now + 9) == 429)
        #expect(server.handle(patch, at: now + 10) == 200)
        #expect(server.quota.used == 1)
        #expect(server.quota.resetsAt == GitHubTimestamp.parse("2027-01-01T00:00:00Z"))
    }

    @Test func aLimitedAccountReadsAsTheFreeTier() throws {
        var server = InMemoryPushWard()
        server.quota = FakeQuota(used: 249, limit: 250)
        let usage = try readUsage(&server, at: now)
        #expect(
            usage
                == PushWardUsage(
                    liveActivityUpdatesUsed: 249, liveActivityUpdatesLimit: 250, widgetUpdatesUsed: 0,
                    widgetUpdatesLimit: 50, notificationsUsed: 0, notificationsLimit: 500,
                    quotaResetsAt: GitHubTimestamp.parse("2027-01-01T00:00:00Z"), quotaPeriodMonth: 202_612,
                    subscribed: false, activityCount: 0))
        #expect(server.handle(post, at: now) == 201)
        #expect(server.handle(patch, at: now) == 429)
    }

    @Test func aZeroLimitRefusesEverything() {
        var server = InMemoryPushWard()
        server.quota = FakeQuota(limit: 0)
        #expect(server.handle(post, at: now) == 429)
        #expect(server.activities.isEmpty)
    }
}
