import BridgeCore
import BridgeTestSupport
import Testing

/// The account's 50 activities: the bridge keeps its ended activities for the next run of their
/// slug, deletes its own oldest ended ones when the account nears the cap (from 45), and on
/// `409 activity.limit_exceeded` deletes its oldest ended one at once and creates again, never
/// touching one that is not ended or not its own.
@Suite("Account room")
struct AccountRoomTests {
    static let start = PacedDispatchTests.start

    static func settings(endedTTL: Int = 900) -> ActivitySettings {
        var settings = PacedDispatchTests.settings
        settings.endedTTL = endedTTL
        return settings
    }

    /// Plays a whole short run of repository `index` at `at`, its requests all acknowledged.
    static func finish(_ index: Int, in engine: inout BridgeEngine, at now: UnixTime, runID: Int? = nil) -> String {
        var script = PacedDispatchTests.script(index)
        if let runID { script.runID = runID }
        for event in script.deliveries(waves: [[RunScript.Job("build")]]) { _ = engine.receive(event, at: now) }
        PacedDispatchTests.drain(&engine, at: now)
        let key = RunKey(repository: script.repository.fullName, runID: script.runID, attempt: 1)
        return engine.slugs[key] ?? ""
    }

    static let full = PushWardProblem(
        status: 409, code: "activity.limit_exceeded", detail: "activity limit reached (max 50)")

    @Test("an ended activity is kept: nothing deleted, and the next run starts with a PATCH carrying the TTLs")
    func endedActivityIsReused() throws {
        var engine = BridgeEngine(settings: Self.settings(endedTTL: 7_200))
        let slug = Self.finish(1, in: &engine, at: Self.start)
        let ended = try #require(engine.sessions[slug])
        #expect(ended.phase == .ended && ended.endedAt == Self.start)
        #expect(ended.serverIdentity == ended.identity)
        #expect(engine.dueRequests(at: Self.start + 86_400, inFlight: []).isEmpty, "nothing to delete")
        // Idle ended cards leave memory; one PushWard keeps for reuse stays (the account holds 50).
        _ = engine.takeChanges()
        engine.forget(at: Self.start + 86_400)
        #expect(engine.sessions[slug] != nil)

        var next = PacedDispatchTests.script(1)
        next.runID = 999
        _ = engine.receive(next.run("requested", at: 0), at: Self.start + 90_000)
        let first = try #require(engine.dueRequests(at: Self.start + 90_000, inFlight: []).first)
        #expect(first.kind == .firstFrame, "no create: PushWard holds the activity")
        #expect(first.request.method == .patch)
        #expect(first.request.body["state"] == "ongoing")
        #expect(first.request.body["priority"] != nil)
        #expect(first.request.body["ended_ttl"] == .number(Double(ActivitySettings.retainedEndedTTL)))
        #expect(first.request.body["dismissal_ttl"] == 7_200)
        #expect(first.request.body["stale_ttl"] != nil)
        engine.acknowledge(first, at: Self.start + 90_000)
        #expect(engine.sessions[slug]?.reused == nil, "only the first frame carries them")
        #expect(engine.runs[first.run]?.updatesSpent == 1, "one update where a create and a frame cost two")
    }

    @Test("a reused activity deleted behind the bridge's back: the PATCH meets 404, the card is created again")
    func reusedActivityGone() throws {
        var engine = BridgeEngine(settings: Self.settings())
        let slug = Self.finish(1, in: &engine, at: Self.start)
        var next = PacedDispatchTests.script(1)
        next.runID = 998
        _ = engine.receive(next.run("requested", at: 0), at: Self.start + 5_000)
        let first = try #require(engine.dueRequests(at: Self.start + 5_000, inFlight: []).first)
        #expect(first.kind == .firstFrame)
        let gone = PushWardProblem(status: 404, code: "activity.not_found", detail: "activity not found")
        #expect(engine.handle(.problem(gone), for: first, at: Self.start + 5_000, jitter: 0) == .recreating)
        #expect(engine.sessions[slug]?.serverIdentity == nil)
        let again = engine.dueRequests(at: Self.start + 5_001, inFlight: [])
        #expect(again.map(\.kind) == [.create])
    }

    @Test("from 45 activities on the account, the bridge's oldest ended ones are deleted down to 44, never a live one")
    func tidiedNearTheCap() throws {
        var engine = BridgeEngine(settings: Self.settings())
        let slugs = (1...4).map { Self.finish($0, in: &engine, at: Self.start + Double($0) * 10) }
        let live = PacedDispatchTests.script(9)
        _ = engine.receive(live.run("requested", at: 0), at: Self.start + 100)
        PacedDispatchTests.drain(&engine, at: Self.start + 100)
        let now = Self.start + 200
        engine.observeAccount(activityCount: 44, at: now)
        #expect(engine.dueRequests(at: now, inFlight: []).isEmpty, "44 is room enough")
        engine.observeAccount(activityCount: 46, at: now)
        let deletions = engine.dueRequests(at: now, inFlight: [])
        #expect(deletions.map(\.kind) == [.delete, .delete])
        #expect(Set(deletions.map(\.request.slug)) == Set(slugs.prefix(2)), "the two oldest")
        // Asked again before the answers: nothing more is chosen.
        engine.observeAccount(activityCount: 46, at: now + 1)
        #expect(engine.sessions.values.filter { $0.deletionRequestedAt != nil }.count == 2)
        for deletion in deletions { engine.acknowledge(deletion, at: now + 2) }
        #expect(engine.sessions[slugs[0]]?.deletedAt == now + 2)
        #expect(engine.dueRequests(at: now + 3, inFlight: []).isEmpty, "44 now")
        // A new repository's create takes the 45th: one more of the oldest goes.
        _ = engine.receive(PacedDispatchTests.script(20).run("requested", at: 0), at: now + 10)
        let create = try #require(engine.dueRequests(at: now + 10, inFlight: []).first)
        #expect(create.kind == .create)
        engine.acknowledge(create, at: now + 10)
        let third = engine.dueRequests(at: now + 11, inFlight: []).filter { $0.kind == .delete }
        #expect(third.map(\.request.slug) == [slugs[2]])
        let liveSlug = engine.slugs[RunKey(repository: live.repository.fullName, runID: live.runID, attempt: 1)]
        #expect(engine.sessions[liveSlug ?? ""]?.deletionRequestedAt == nil)
    }

    @Test("a 404 to the DELETE is as good as a 2xx; a failed one is tried again after its backoff")
    func deletionAnswers() throws {
        var engine = BridgeEngine(settings: Self.settings())
        let slug = Self.finish(1, in: &engine, at: Self.start)
        let at = Self.start + 900
        engine.observeAccount(activityCount: 45, at: at)
        let deletion = try #require(engine.dueRequests(at: at, inFlight: []).first)
        #expect(deletion.kind == .delete)
        let failed = engine.handle(.noAnswer(reason: "timed out"), for: deletion, at: at, jitter: 0)
        guard case .willRetry(let retryAt, _) = failed else {
            Issue.record("\(failed)")
            return
        }
        #expect(engine.dueRequests(at: at + 0.1, inFlight: []).isEmpty)
        let again = try #require(engine.dueRequests(at: retryAt, inFlight: []).first)
        #expect(again.kind == .delete)
        let gone = PushWardProblem(status: 404, code: "activity.not_found", detail: "activity not found")
        #expect(engine.handle(.problem(gone), for: again, at: retryAt, jitter: 0) == .acknowledged)
        #expect(engine.sessions[slug]?.deletedAt == retryAt)
        #expect(engine.sessions[slug]?.serverIdentity == nil, "the next run creates it again")
    }

    @Test("AccountRoom: the excess from 45 on, victims oldest first by end then slug, minus those asked")
    func roomArithmetic() {
        var room = AccountRoom()
        #expect(room.excess == 0, "nothing before a read")
        room.read(44, at: 1)
        #expect(room.excess == 0)
        room.noteCreated()
        #expect(room.excess == 1)
        room.read(50, at: 2)
        #expect(room.excess == 6)
        let candidates: [(slug: String, endedAt: UnixTime)] = [("c", 3), ("a", 1), ("b", 1), ("d", 9)]
        #expect(room.victims(among: candidates, asked: 3) == ["a", "b", "c"])
        #expect(room.victims(among: candidates, asked: 6) == [])
        room.noteDeleted()
        #expect(room.activityCount == 49)
    }

    @Test("a create meeting the cap frees the bridge's oldest ended activity, then goes as soon as that is deleted")
    func limitExceeded() throws {
        var engine = BridgeEngine(settings: Self.settings(endedTTL: 86_400))
        let oldest = Self.finish(1, in: &engine, at: Self.start)
        let second = Self.finish(2, in: &engine, at: Self.start + 10)
        // A live card is never the one deleted.
        let live = PacedDispatchTests.script(3)
        _ = engine.receive(live.run("requested", at: 0), at: Self.start + 20)
        PacedDispatchTests.drain(&engine, at: Self.start + 20)
        let now = Self.start + 30
        _ = engine.receive(PacedDispatchTests.script(4).run("requested", at: 0), at: now)
        let create = try #require(engine.dueRequests(at: now, inFlight: []).first)
        #expect(create.kind == .create)

        let effect = engine.handle(.problem(Self.full), for: create, at: now, jitter: 0)
        guard case .roomNeeded(let freeing, _) = effect else {
            Issue.record("\(effect)")
            return
        }
        #expect(freeing == oldest)
        let waiting = try #require(engine.sessions[create.request.slug])
        #expect(waiting.waitsForRoom == true)
        #expect(waiting.lastProblem?.contains(oldest) == true, "\(waiting.lastProblem ?? "")")
        let deletion = engine.dueRequests(at: now, inFlight: [])
        #expect(deletion.map(\.kind) == [.delete] && deletion.first?.request.slug == oldest, "\(deletion)")
        // The create met the cap again before the deletion was answered: no second activity goes.
        #expect(
            engine.handle(.problem(Self.full), for: create, at: now, jitter: 0)
                == .roomNeeded(freeing: nil, retryAt: try #require(engine.sessions[create.request.slug]?.retryAt)))
        #expect(engine.sessions[second]?.deletionRequestedAt == nil)
        #expect(engine.sessions.values.filter { $0.deletionRequestedAt != nil }.count == 1)

        engine.acknowledge(try #require(deletion.first), at: now + 1)
        #expect(engine.dueRequests(at: now + 1, inFlight: []).map(\.request.slug) == [create.request.slug])
        let liveSlug = engine.slugs[RunKey(repository: live.repository.fullName, runID: live.runID, attempt: 1)]
        #expect(engine.sessions[liveSlug ?? ""]?.deletionRequestedAt == nil)
    }

    @Test("with nothing of its own ended, a create meeting the cap waits and says why; nothing is deleted")
    func nothingToFree() throws {
        var engine = BridgeEngine(settings: Self.settings())
        _ = engine.receive(PacedDispatchTests.script(1).run("requested", at: 0), at: Self.start)
        PacedDispatchTests.drain(&engine, at: Self.start)
        _ = engine.receive(PacedDispatchTests.script(2).run("requested", at: 0), at: Self.start + 5)
        let create = try #require(engine.dueRequests(at: Self.start + 5, inFlight: []).first)
        let effect = engine.handle(.problem(Self.full), for: create, at: Self.start + 5, jitter: 0)
        guard case .roomNeeded(nil, let retryAt) = effect else {
            Issue.record("\(effect)")
            return
        }
        #expect(retryAt > Self.start + 5)
        let session = try #require(engine.sessions[create.request.slug])
        #expect(session.lastProblem?.contains("none of the bridge's activities has ended") == true)
        #expect(engine.dueRequests(at: Self.start + 5, inFlight: []).isEmpty)
        #expect(engine.dueRequests(at: retryAt, inFlight: []).map(\.kind) == [.create], "tried again, not dropped")
    }
}
