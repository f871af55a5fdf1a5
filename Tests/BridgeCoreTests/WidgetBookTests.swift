import BridgeTestSupport
import Testing

@testable import BridgeCore

/// The widget feature on its own: which run a widget follows, the requests it wants, and what
/// PushWard's answers do to it and to the dispatch gate.
@Suite("widget book")
struct WidgetBookTests {
    typealias F = EngineFeatureFixtures
    static let main = WidgetSettings(slug: "ci-main", name: "CI on main", branches: [GlobPattern("main")])

    static func script(_ runID: Int, at start: UnixTime, branch: String = "main") -> RunScript {
        RunScript(runID: runID, branch: branch, start: start)
    }

    @Test("a widget follows the newest run its globs choose and never goes back to an older one")
    func follows() throws {
        var book = WidgetBook()
        var changes = EngineChanges()
        let older = F.running(Self.script(1, at: F.start))
        let newer = F.running(Self.script(2, at: F.start + 60))
        let elsewhere = F.running(Self.script(3, at: F.start + 120, branch: "feature"))
        book.follow(newer, configured: [Self.main], icon: "hammer", supersededBy: { nil }, changes: &changes)
        #expect(changes.widgets == ["ci-main"])
        #expect(book.sessions["ci-main"]?.run == newer.key)

        var later = EngineChanges()
        book.follow(older, configured: [Self.main], icon: "hammer", supersededBy: { nil }, changes: &later)
        book.follow(elsewhere, configured: [Self.main], icon: "hammer", supersededBy: { nil }, changes: &later)
        #expect(book.sessions["ci-main"]?.run == newer.key)
        #expect(later.widgets.isEmpty, "nothing it shows changed")

        var same = EngineChanges()
        book.follow(newer, configured: [Self.main], icon: "hammer", supersededBy: { nil }, changes: &same)
        #expect(same.widgets.isEmpty)
        #expect(try #require(book.sessions["ci-main"]?.desired)["icon"] == "hammer")
    }

    @Test("the end of a cancelled run asks who superseded it, and only then")
    func supersededAsked() {
        var book = WidgetBook()
        var changes = EngineChanges()
        var asked = 0
        book.follow(
            F.running(Self.script(1, at: F.start)), configured: [Self.main], icon: "hammer",
            supersededBy: {
                asked += 1
                return nil
            }, changes: &changes)
        #expect(asked == 0)
        book.follow(
            F.finished(Self.script(1, at: F.start), conclusion: "cancelled"), configured: [Self.main], icon: "hammer",
            supersededBy: {
                asked += 1
                return 43
            }, changes: &changes)
        #expect(asked == 1)
        #expect(book.sessions["ci-main"]?.desiredFinal == true)
    }

    /// The request of a widget that follows a run just started.
    static func firstRequest(_ book: inout WidgetBook, at now: UnixTime, dispatch: inout DispatchControl) throws
        -> PlannedWidgetRequest
    {
        var changes = EngineChanges()
        book.follow(
            F.running(Self.script(1, at: F.start)), configured: [Self.main], icon: "hammer", supersededBy: { nil },
            changes: &changes)
        let due = book.dueRequests(at: now, inFlight: [], configured: [Self.main], dispatch: &dispatch)
        return try #require(due.first)
    }

    @Test("a request goes once acknowledged; a spent quota pauses every widget until the reset")
    func quota() throws {
        var (book, dispatch, changes) = (WidgetBook(), DispatchControl(), EngineChanges())
        let now = F.start + 10
        let planned = try Self.firstRequest(&book, at: now, dispatch: &dispatch)
        let inFlight = book.dueRequests(at: now, inFlight: ["ci-main"], configured: [Self.main], dispatch: &dispatch)
        #expect(inFlight.isEmpty)

        let effect = book.handle(
            .problem(
                PushWardProblem(status: 429, code: "quota.exceeded", resetAt: now + 600, quotaUsed: 10, quotaLimit: 10)),
            for: planned, at: now, dispatch: &dispatch, changes: &changes)
        #expect(effect == .quotaExhausted(until: now + 600))
        #expect(book.budget.used == 10 && book.budget.limit == 10)
        let paused = book.dueRequests(at: now + 1, inFlight: [], configured: [Self.main], dispatch: &dispatch)
        #expect(paused.isEmpty)
        #expect(book.nextWakeup(after: now) == now + 600)
        #expect(dispatch.gate == DispatchGate(), "a widget's spent quota is not the cards'")

        book.noteUsage(used: 3, limit: 1_000)
        #expect(book.budget.used == 3 && book.budget.limit == 1_000)
    }

    @Test("PushWard's per-minute limit goes to the dispatch gate; no answer retries with a growing backoff")
    func rateLimitAndRetries() throws {
        var (book, dispatch, changes) = (WidgetBook(), DispatchControl(), EngineChanges())
        let now = F.start + 10
        let planned = try Self.firstRequest(&book, at: now, dispatch: &dispatch)
        _ = book.handle(
            .problem(PushWardProblem(status: 429, code: "rate_limit.exceeded", retryAfter: 30)), for: planned, at: now,
            dispatch: &dispatch, changes: &changes)
        #expect(dispatch.gate.rateLimitedUntil == now + 30)
        #expect(changes.gate)

        let first = book.handle(
            .noAnswer(reason: "timeout"), for: planned, at: now, dispatch: &dispatch, changes: &changes)
        let second = book.handle(
            .noAnswer(reason: "timeout"), for: planned, at: now, dispatch: &dispatch, changes: &changes)
        guard case .willRetry(let firstAt) = first, case .willRetry(let secondAt) = second else {
            Issue.record("no answer is retried")
            return
        }
        #expect(secondAt - now > firstAt - now)
        #expect(book.sessions["ci-main"]?.lastProblem == "timeout")
    }

    @Test("a widget read back from storage is held as it was")
    func restore() {
        var book = WidgetBook()
        var session = WidgetSession(slug: "ci-main")
        session.failures = 3
        book.restore(session)
        #expect(book.sessions["ci-main"] == session)
    }
}
