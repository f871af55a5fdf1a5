import BridgeCore
import BridgeTestSupport
import Testing

/// The in-memory PushWard's documented limits, without HTTP (`PUSHWARD-MORE.md` §7 and the
/// OpenAPI document): five ongoing activities per person with eviction by priority then age,
/// `preempted` and what a PATCH to it must carry, fifty activities per account, `DELETE` and
/// auto-deletion after `ended_ttl`.
@Suite struct FakePushWardLimitsTests {
    private let now: UnixTime = 1_790_000_000
    private let content: JSONValue = ["template": "generic", "progress": 0.5, "state": "Running"]

    private func post(_ slug: String, priority: Int = 5, endedTTL: Int? = nil, target: JSONValue? = nil)
        -> PushWardRequest
    {
        var body: [String: JSONValue] = [
            "slug": .string(slug), "name": .string(slug), "priority": .number(Double(priority)),
        ]
        if let endedTTL { body["ended_ttl"] = .number(Double(endedTTL)) }
        if let target { body["target"] = target }
        return PushWardRequest(method: .post, slug: slug, body: .object(body))
    }

    private func start(_ slug: String) -> PushWardRequest {
        PushWardRequest(method: .patch, slug: slug, body: ["state": "ongoing", "content": content])
    }

    private func end(_ slug: String) -> PushWardRequest {
        PushWardRequest(method: .patch, slug: slug, body: ["state": "ended", "content": ["progress": 1]])
    }

    /// Creates and starts `slug` at `time`, expecting both accepted.
    private func open(
        _ server: inout InMemoryPushWard, _ slug: String, priority: Int = 5, at time: UnixTime,
        target: JSONValue? = nil
    ) {
        #expect(server.handle(post(slug, priority: priority, target: target), at: time) == 201)
        #expect(server.handle(start(slug), at: time) == 200)
    }

    @Test func theSixthOngoingEvictsTheLowestPriorityThenTheOldest() {
        var server = InMemoryPushWard()
        // Priorities 5, 3, 5, 3, 5 started a second apart: the two 3s are the candidates, and the
        // older of them goes first.
        for (index, priority) in [5, 3, 5, 3, 5].enumerated() {
            open(&server, "run-\(index)", priority: priority, at: now + Double(index))
        }
        #expect(server.evictions.isEmpty)
        open(&server, "run-5", priority: 5, at: now + 10)
        #expect(server.evictions == [FakeEviction(slug: "run-1", at: now + 10, by: "run-5", person: "account")])
        #expect(server.activities["run-1"]?.state == "preempted")
        #expect(server.ongoing(of: "account") == ["run-0", "run-2", "run-3", "run-4", "run-5"])

        open(&server, "run-6", priority: 5, at: now + 11)
        #expect(server.evictions.last?.slug == "run-3", "the other 3, though started after every 5 but one")
        #expect(server.peakOngoing["account"] == 5)
        #expect(server.violations.isEmpty)
    }

    @Test func aNewcomerBelowEveryOngoingOneIsTheOnePreempted() {
        var server = InMemoryPushWard()
        for index in 0..<5 { open(&server, "run-\(index)", priority: 5, at: now) }
        open(&server, "low", priority: 1, at: now + 1)
        #expect(server.evictions == [FakeEviction(slug: "low", at: now + 1, by: "low", person: "account")])
        #expect(server.activities["low"]?.state == "preempted")
        #expect(server.ongoing(of: "account").count == 5)
    }

    @Test func aPreemptedActivityTakesOnlyAPatchThatSetsItsState() {
        var server = InMemoryPushWard()
        for index in 0..<6 { open(&server, "run-\(index)", at: now + Double(index)) }
        #expect(server.activities["run-0"]?.state == "preempted")

        // A content update without `state` is refused, and nothing changes.
        let update = PushWardRequest(method: .patch, slug: "run-0", body: ["content": ["progress": 0.9]])
        #expect(server.handle(update, at: now + 10) == 400)
        #expect(server.log.last?.code == "activity.state_invalid")
        #expect(server.activities["run-0"]?.content["progress"] == 0.5)

        // `ongoing` (any case) restarts it, which evicts the oldest of the others.
        let restart = PushWardRequest(method: .patch, slug: "run-0", body: ["state": "Ongoing"])
        #expect(server.handle(restart, at: now + 11) == 200)
        #expect(server.activities["run-0"]?.state == "ongoing")
        #expect(server.evictions.map(\.slug) == ["run-0", "run-1"])

        // `ended` ends it for good.
        #expect(server.handle(end("run-1"), at: now + 12) == 200)
        #expect(server.activities["run-1"]?.state == "ended")
        #expect(server.quota.used == 12 + 2, "the refused update cost nothing")
    }

    @Test func aBadStateOrPriorityOnPatchIsA400WithItsCode() {
        var server = InMemoryPushWard()
        open(&server, "ci", at: now)
        for (body, code) in [
            (["state": "paused"] as JSONValue, "activity.state_invalid"),
            (["state": "preempted"], "activity.state_invalid"),
            (["priority": 11], "activity.priority_invalid"),
            (["priority": -1], "activity.priority_invalid"),
        ] {
            #expect(server.handle(PushWardRequest(method: .patch, slug: "ci", body: body), at: now + 1) == 400)
            #expect(server.log.last?.code == code, "\(body)")
            #expect(server.log.last?.violations.isEmpty == false, "the bridge sent something PushWard refuses")
        }
        #expect(server.activities["ci"]?.state == "ongoing")
        #expect(server.activities["ci"]?.priority == 5)
    }

    @Test func anOrganisationKeyCountsEachMemberAndAnUntargetedActivityAgainstEveryone() {
        var server = InMemoryPushWard()
        server.keyKind = .organisation
        let alice: JSONValue = ["members": ["alice"]]
        let bob: JSONValue = ["members": ["bob"]]
        for index in 0..<5 { open(&server, "alice-\(index)", at: now + Double(index), target: alice) }
        open(&server, "bob-0", at: now + 5, target: bob)
        #expect(server.evictions.isEmpty, "five for alice and one for bob: nobody is over")
        #expect(server.persons(of: "alice-0") == ["alice"])

        // Untargeted: it reaches alice (her sixth) and bob, and the rest of the organisation.
        open(&server, "everyone", at: now + 6)
        #expect(server.persons(of: "everyone") == ["organisation", "alice", "bob"])
        #expect(server.evictions == [FakeEviction(slug: "alice-0", at: now + 6, by: "everyone", person: "alice")])
        #expect(server.ongoing(of: "bob") == ["bob-0", "everyone"])
        #expect(server.peakOngoing["alice"] == 5)
    }

    @Test func theFiftyFirstActivityIsRefusedUntilOneIsDeleted() {
        var server = InMemoryPushWard()
        for index in 0..<50 {
            #expect(server.handle(post("run-\(index)", endedTTL: 600), at: now) == 201)
        }
        #expect(server.handle(post("run-50"), at: now + 1) == 409)
        #expect(server.log.last?.code == "activity.limit_exceeded")
        #expect(server.violations.isEmpty, "a full account is not a contract violation")
        #expect(
            server.handle(post("run-7", priority: 2), at: now + 1) == 201, "re-posting an existing slug is no create")
        let upsert = PushWardRequest(method: .patch, slug: "run-51", body: ["state": "ongoing", "content": content])
        #expect(server.handle(upsert, at: now + 1, upsert: true) == 409)
        #expect(server.secondsUntilRoom(at: now + 1) == 60, "nothing is due for deletion")

        #expect(server.delete("run-3", at: now + 2) == 204)
        #expect(server.delete("run-3", at: now + 2) == 404)
        #expect(server.handle(upsert, at: now + 3, upsert: true) == 201)
        #expect(server.log.last?.created == true)
        #expect(server.activities["run-51"]?.name == "run-51")
        #expect(server.activities["run-51"]?.state == "ongoing")
        #expect(server.peakActivities == 50)
    }

    @Test func endedActivitiesAreDeletedEndedTTLAfterTheEndAndNotBefore() {
        var server = InMemoryPushWard()
        for index in 0..<50 {
            #expect(server.handle(post("run-\(index)", endedTTL: 300), at: now) == 201)
        }
        #expect(server.handle(start("run-0"), at: now) == 200)
        #expect(server.handle(end("run-0"), at: now + 100) == 200)
        #expect(server.records["run-0"]?.deleteAt == now + 400)
        #expect(server.records["run-0"]?.endedAt == now + 100)
        #expect(server.handle(post("late"), at: now + 399) == 409)
        #expect(server.secondsUntilRoom(at: now + 399) == 1)
        #expect(server.handle(post("late"), at: now + 400) == 201)
        #expect(server.activities["run-0"] == nil)
        #expect(server.deletions.map(\.slug) == ["run-0"])
        #expect(server.deletions.first?.automatic == true)
    }

    @Test func autoDeletionCanBeSlowedOrTurnedOffButNotHastened() {
        for (mode, expected) in [
            (FakeLimits.AutoDeletion.asDocumented, now + 300 as UnixTime?), (.slowed(factor: 10), now + 3_000),
            (.off, nil),
        ] {
            var server = InMemoryPushWard()
            server.limits.autoDeletion = mode
            #expect(server.handle(post("ci", endedTTL: 300), at: now) == 201)
            #expect(server.handle(start("ci"), at: now) == 200)
            #expect(server.handle(end("ci"), at: now) == 200)
            #expect(server.records["ci"]?.deleteAt == expected, "\(mode)")
        }
        // Without `ended_ttl`: the documented 30 days.
        var server = InMemoryPushWard()
        server.handle(post("ci"), at: now)
        server.handle(start("ci"), at: now)
        server.handle(end("ci"), at: now)
        #expect(server.records["ci"]?.deleteAt == now + 2_592_000)
        // Going ongoing again cancels the deletion.
        server.handle(start("ci"), at: now + 1)
        #expect(server.records["ci"]?.deleteAt == nil)
        #expect(server.list(state: "ongoing", at: now + 5_000_000) == ["ci"])
    }

    @Test func theActivityDocumentHasTheDocumentedMembers() throws {
        var server = InMemoryPushWard()
        open(&server, "ci", at: now)
        server.handle(end("ci"), at: now + 60)
        let document = try #require(server.document("ci"))
        for key in ["kind", "id", "slug", "name", "state", "priority", "content", "created_at", "updated_at"] {
            #expect(document[key] != nil, "\(key) is required in Activity")
        }
        #expect(document["state"] == "ended")
        #expect(document["ended_at"] == .string(GitHubTimestamp.format(now + 60)))
        #expect(document["delete_at"] == .string(GitHubTimestamp.format(now + 60 + 2_592_000)))
        #expect(server.document("nothing") == nil)
    }
}
