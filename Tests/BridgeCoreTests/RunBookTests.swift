import BridgeTestSupport
import Testing

@testable import BridgeCore

/// The runs feature on its own: what it records as changed, the card a run draws on and lets go
/// of, completion by grace, and the questions the other features ask it.
@Suite("run book")
struct RunBookTests {
    typealias F = EngineFeatureFixtures
    static let grace: UnixTime = 600

    @Test("storing a run records it and only the jobs that moved; storing it unchanged records nothing")
    func storeRecordsChanges() {
        var book = RunBook(completionGrace: Self.grace)
        let script = RunScript(runID: 1)
        var changes = EngineChanges()
        let running = F.running(script)
        book.store(running, changes: &changes)
        #expect(changes.runs == [running.key])
        #expect(changes.jobs[running.key] == Set(running.jobs.keys))

        var again = EngineChanges()
        book.store(running, changes: &again)
        #expect(again.isEmpty)

        let finished = F.jobsFinished(script)
        book.store(finished, changes: &again)
        #expect(again.runs == [running.key])
        #expect(again.jobs[running.key] == Set(finished.jobs.filter { running.jobs[$0.key] != $0.value }.keys))
        #expect(book[running.key] == finished)
    }

    @Test(
        "a run whose jobs all finished is taken as finished a grace period after, with the conclusion GitHub would send"
    )
    func completionByGrace() throws {
        var book = RunBook(completionGrace: Self.grace)
        var changes = EngineChanges()
        let failed = F.jobsFinished(RunScript(runID: 1), conclusion: "failure")
        let going = F.running(RunScript(runID: 2))
        book.store(failed, changes: &changes)
        book.store(going, changes: &changes)
        let due = failed.lastChangeAt + Self.grace
        #expect(book.nextCompletion(after: failed.lastChangeAt) == due)
        #expect(book.dueCompletions(at: due - 1).isEmpty)
        #expect(book.dueCompletions(at: due).map(\.0) == [failed.key])

        var later = EngineChanges()
        let completed = book.completeByGrace(failed.key, at: due, changes: &later)
        let before = try #require(completed)
        #expect(before == failed)
        #expect(book[failed.key]?.completion?.conclusion == "failure")
        #expect(book[failed.key]?.completion?.source == .inferred)
        #expect(later.runs == [failed.key])
        // Done: nothing more is due, and a second call finds nothing to finish.
        #expect(book.nextCompletion(after: failed.lastChangeAt) == nil)
        let twice = book.completeByGrace(failed.key, at: due, changes: &later)
        #expect(twice == nil)
    }

    /// A book holding `states`, and the changes storing them recorded.
    static func book(holding states: [RunState]) -> (RunBook, EngineChanges) {
        var book = RunBook(completionGrace: grace)
        var changes = EngineChanges()
        for state in states { book.store(state, changes: &changes) }
        return (book, changes)
    }

    @Test("the API saying a run goes on starts its grace period again")
    func heardFromAPI() {
        let state = F.jobsFinished(RunScript(runID: 1))
        var (book, changes) = Self.book(holding: [state])
        let now = state.lastChangeAt + 100
        book.heardFromAPI(state.key, at: now, changes: &changes)
        #expect(book[state.key]?.lastChangeAt == now)
        #expect(book.nextCompletion(after: now) == now + Self.grace)
    }

    @Test("a run draws on its first card for good; released, it no longer contends; let go of, nothing of it is held")
    func cardsAndReleases() {
        let state = F.running(RunScript(runID: 1))
        var (book, _) = Self.book(holding: [state])
        let drawn = book.draw(state.key, on: "ci")
        let again = book.draw(state.key, on: "other")
        #expect(drawn == "ci")
        #expect(again == "ci")
        #expect(book.contenders(of: "ci") == [state.key])

        var released = EngineChanges()
        book.release(state.key, slug: "ci", changes: &released)
        #expect(released.runs == [state.key])
        #expect(book.released.contains(state.key))
        #expect(book.contenders(of: "ci").isEmpty)

        book.letGo(state.key, slug: "ci")
        #expect(book[state.key] == nil)
        #expect(book.slugs[state.key] == nil)
        #expect(!book.released.contains(state.key))
        #expect(book.contendersBySlug["ci"] == nil)
    }

    @Test("only a released run that finished long enough ago, holds no card and has nothing unwritten is let go of")
    func finishedSelection() {
        let done = F.finished(RunScript(runID: 1))
        let held = F.finished(RunScript(runID: 2))
        let unwritten = F.finished(RunScript(runID: 3))
        var (book, changes) = Self.book(holding: [done, held, unwritten])
        for (state, slug) in [(done, "a"), (held, "b"), (unwritten, "c")] {
            _ = book.draw(state.key, on: slug)
            book.release(state.key, slug: slug, changes: &changes)
        }
        var pending = EngineChanges()
        pending.runs = [unwritten.key]
        let after = done.lastChangeAt + 1
        let picked = book.finished(
            before: after, abandonedAfter: 86_400, pending: pending, holder: { $0 == "b" ? held.key : nil })
        #expect(picked.map(\.0) == [done.key])
        #expect(
            book.finished(before: done.lastChangeAt, abandonedAfter: 86_400, pending: pending, holder: { _ in nil })
                .isEmpty)
    }

    @Test("a silent run not finished is abandoned unless it holds its card or was released")
    func abandonedSelection() {
        let silent = F.running(RunScript(runID: 1))
        let holding = F.running(RunScript(runID: 2))
        var (book, changes) = Self.book(holding: [silent, holding])
        _ = book.draw(silent.key, on: "a")
        _ = book.draw(holding.key, on: "b")
        let picked = book.abandoned(before: silent.lastChangeAt + 1, holder: { $0 == "b" ? holding.key : nil })
        #expect(picked.map(\.0) == [silent.key])
        book.release(silent.key, slug: "a", changes: &changes)
        #expect(book.abandoned(before: silent.lastChangeAt + 1, holder: { _ in nil }).map(\.0) == [holding.key])
    }

    @Test("what other features record on a run is recorded only for a run held")
    func recordsOnRuns() {
        var book = RunBook(completionGrace: Self.grace)
        var changes = EngineChanges()
        let state = F.running(RunScript(runID: 1))
        let stranger = RunKey(repository: "acme/other", runID: 9, attempt: 1)
        let decision = CardDecision(
            level: nil, reason: "the budget is spent", decidedAt: state.lastChangeAt, remaining: 0, forecastRuns: 1)
        book.record(decision, for: stranger, changes: &changes)
        book.countUpdate(for: stranger, changes: &changes)
        book.place(stranger, CardPlacement(place: .card, since: 0, rank: .other), changes: &changes)
        #expect(changes.isEmpty)

        book.store(state, changes: &changes)
        var recorded = EngineChanges()
        book.record(decision, for: state.key, changes: &recorded)
        book.countUpdate(for: state.key, changes: &recorded)
        book.countUpdate(for: state.key, changes: &recorded)
        #expect(book[state.key]?.cardDecision == decision)
        #expect(book[state.key]?.updatesSpent == 2)
        #expect(recorded.runs == [state.key])

        let placement = CardPlacement(place: .summary, since: 5, rank: .other)
        var placed = EngineChanges()
        book.place(state.key, placement, changes: &placed)
        #expect(placed.runs == [state.key])
        var same = EngineChanges()
        book.place(state.key, placement, changes: &same)
        #expect(same.isEmpty, "the same placement again changes nothing")
    }

    @Test("attempts: the latest earlier one held, a newer one known, even for an attempt number near 2^63")
    func attempts() {
        var book = RunBook(completionGrace: Self.grace)
        var changes = EngineChanges()
        let first = F.finished(RunScript(runID: 1, attempt: 1), conclusion: "failure")
        let second = F.finished(RunScript(runID: 1, attempt: 2), conclusion: "failure")
        book.store(first, changes: &changes)
        book.store(second, changes: &changes)
        let huge = RunKey(repository: first.key.repository, runID: 1, attempt: Int.max)
        #expect(book.latestAttempt(before: huge)?.key == second.key)
        #expect(book.latestAttempt(before: first.key) == nil)
        #expect(book.hasNewerAttempt(than: first.key))
        #expect(!book.hasNewerAttempt(than: second.key))
    }

    @Test("a cancelled run names the newer run of its workflow and branch; quiet runs come quietest first")
    func questions() {
        var book = RunBook(completionGrace: Self.grace)
        var changes = EngineChanges()
        var older = RunScript(runID: 1, runNumber: 7)
        older.start = F.start
        var newer = RunScript(runID: 2, runNumber: 8)
        newer.start = F.start + 60
        let cancelled = F.finished(older, conclusion: "cancelled")
        let going = F.running(newer)
        book.store(cancelled, changes: &changes)
        book.store(going, changes: &changes)
        #expect(book.supersedingRunNumber(of: cancelled) == 8)
        #expect(book.supersedingRunNumber(of: going) == nil)
        #expect(book.quietRuns(since: going.lastChangeAt + 1, limit: 5) == [going.key])
        #expect(book.quietRuns(since: going.lastChangeAt, limit: 5).isEmpty)
    }

    @Test("a finished run goes to history, recorded as changed and in the cache when its workflow is held")
    func history() {
        var book = RunBook(completionGrace: Self.grace)
        var changes = EngineChanges()
        let state = F.finished(RunScript(runID: 1))
        let workflow = HistoryCache.Workflow(repository: state.key.repository, name: "CI")
        book.cache(RunHistory(), for: workflow)
        book.store(state, changes: &changes)
        book.recordHistory(for: state.key, changes: &changes)
        #expect(changes.history[state.key]?.conclusion == "success")
        let cached = book.cachedHistory(workflow)
        #expect(cached?.summaries.map(\.key) == [state.key])
    }
}
