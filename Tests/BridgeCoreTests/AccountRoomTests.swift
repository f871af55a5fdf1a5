import BridgeCore
import BridgeTestSupport
import Testing

/// The account's 50 activities: the bridge deletes its own ended activities once they lingered
/// `ended_ttl`, and on `409 activity.limit_exceeded` deletes its oldest ended one at once and
/// creates again, never touching one that is not ended or not its own.
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

    @Test("an ended activity is deleted once it lingered ended_ttl, at no update's cost; the next run creates it again")
    func lingeringDeletion() throws {
        var engine = BridgeEngine(settings: Self.settings(endedTTL: 7_200))
        let slug = Self.finish(1, in: &engine, at: Self.start)
        let ended = try #require(engine.sessions[slug])
        #expect(ended.phase == .ended && ended.endedAt == Self.start)
        #expect(engine.dueRequests(at: Self.start + 7_199, inFlight: []).isEmpty)
        #expect(engine.nextWakeup(after: Self.start + 1) == Self.start + 7_200)
        // Past an hour idle an ended card would leave memory; one still to delete stays.
        _ = engine.takeChanges()
        engine.forget(at: Self.start + 3_700)
        #expect(engine.sessions[slug] != nil)

        let due = engine.dueRequests(at: Self.start + 7_200, inFlight: [])
        let deletion = try #require(due.first)
        #expect(due.count == 1 && deletion.kind == .delete)
        #expect(deletion.request.method == .delete && deletion.request.path == "/activities/\(slug)")
        #expect(deletion.request.body == .null)
        let spent = engine.runs[deletion.run]?.updatesSpent
        engine.acknowledge(deletion, at: Self.start + 7_200)
        let deleted = try #require(engine.sessions[slug])
        #expect(deleted.deletedAt == Self.start + 7_200 && deleted.acknowledged == nil)
        #expect(deleted.totalUpdates == ended.totalUpdates, "a DELETE is not an update")
        #expect(engine.runs[deletion.run]?.updatesSpent == spent)
        #expect(engine.dueRequests(at: Self.start + 9_000, inFlight: []).isEmpty, "sent once")
        _ = engine.takeChanges()
        engine.forget(at: Self.start + 7_200 + 3_601)
        #expect(engine.sessions[slug] == nil)

        var next = PacedDispatchTests.script(1)
        next.runID = 999
        _ = engine.receive(next.run("requested", at: 0), at: Self.start + 20_000)
        #expect(engine.dueRequests(at: Self.start + 20_000, inFlight: []).map(\.kind) == [.create])
    }

    @Test("a 404 to the DELETE is as good as a 2xx; a failed one is tried again after its backoff")
    func deletionAnswers() throws {
        var engine = BridgeEngine(settings: Self.settings())
        let slug = Self.finish(1, in: &engine, at: Self.start)
        let at = Self.start + 900
        let deletion = try #require(engine.dueRequests(at: at, inFlight: []).first)
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
