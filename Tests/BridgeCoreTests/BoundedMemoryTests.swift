import BridgeTestSupport
import Testing

@testable import BridgeCore

/// What the engine holds follows the work in flight: however many runs went before, only the
/// unfinished ones, a minute of finished ones and a bounded history cache stay in memory.
@Suite("Bounded engine memory")
struct BoundedMemoryTests {
    static func summary(_ runID: Int, workflow: String = "CI", finishedAt: UnixTime) -> RunSummary {
        RunSummary(
            key: RunKey(repository: "acme/widgets", runID: runID, attempt: 1), workflow: workflow, branch: "main",
            conclusion: "success", finishedAt: finishedAt,
            groups: [GroupSummary(name: "build", jobCount: 1, duration: 60)])
    }

    @Test("the history cache drops the least recently used workflow when full")
    func leastRecentlyUsedGoesFirst() {
        var cache = HistoryCache(capacity: 2)
        let ci = HistoryCache.Workflow(repository: "acme/widgets", name: "CI")
        let nightly = HistoryCache.Workflow(repository: "acme/widgets", name: "Nightly")
        let release = HistoryCache.Workflow(repository: "acme/widgets", name: "Release")
        cache.store(RunHistory(summaries: [Self.summary(1, finishedAt: 10)]), for: ci)
        cache.store(RunHistory(), for: nightly)
        #expect(cache.lookup(ci) != nil)  // CI is now the more recently used
        cache.store(RunHistory(), for: release)
        #expect(cache.count == 2)
        #expect(cache.lookup(nightly) == nil)
        #expect(cache.lookup(ci)?.summaries.map(\.key.runID) == [1])
        #expect(cache.lookup(release) != nil)
    }

    @Test("a finished run is added to its workflow's entry only when the cache holds it")
    func recordsIntoHeldEntries() {
        var cache = HistoryCache(capacity: 4)
        let ci = HistoryCache.Workflow(repository: "acme/widgets", name: "CI")
        cache.recordIfHeld(Self.summary(1, finishedAt: 10))
        #expect(cache.lookup(ci) == nil)
        cache.store(RunHistory(), for: ci)
        cache.recordIfHeld(Self.summary(2, finishedAt: 20))
        cache.recordIfHeld(Self.summary(3, workflow: "Nightly", finishedAt: 30))
        #expect(cache.lookup(ci)?.summaries.map(\.key.runID) == [2])
        #expect(cache.count == 1)
    }

    @Test("after 300 runs of 30 workflows the engine holds what is in flight, not what went before")
    func engineStateFollowsWorkInFlight() {
        var engine = BridgeEngine(settings: .pushingEveryChange, historyCapacity: 8)
        var archive = RunHistory()
        var now: UnixTime = 1_700_000_000
        var peakRuns = 0
        for index in 0..<300 {
            var script = RunScript(
                runID: 1_000 + index, runNumber: index, workflow: "workflow-\(index % 30)", start: now,
                firstJobID: 100_000 + index * 10)
            script.repository = Repository(
                fullName: "acme/repo-\(index % 10)", htmlURL: "https://github.com/acme/repo-\(index % 10)")
            for event in script.deliveries(waves: [[RunScript.Job("build", duration: 60)]]) {
                now += 5
                _ = engine.receive(event, at: now, history: archive)
                for slug in engine.sessions.keys.sorted() {
                    var rounds = 0
                    while case .send(let planned) = engine.decide(slug: slug, at: now), rounds < 16 {
                        engine.acknowledge(planned, at: now)
                        rounds += 1
                    }
                }
                for summary in engine.takeChanges().history.values { archive.record(summary) }
            }
            // The end frame and the end go out on their timers (heartbeats aside).
            for _ in 0..<32 {
                guard let next = engine.nextWakeup(after: now), next < now + 1_800 else { break }
                now = next
                engine.advance(to: now)
                for slug in engine.sessions.keys.sorted() {
                    while case .send(let planned) = engine.decide(slug: slug, at: now) {
                        engine.acknowledge(planned, at: now)
                    }
                }
            }
            now += 3_600
            engine.forget(at: now)
            peakRuns = max(peakRuns, engine.runs.count)
            #expect(engine.sessions.values.allSatisfy { $0.phase == .ended }, "run \(index)")
        }
        #expect(archive.summaries.count == 300)
        #expect(peakRuns <= 2, "runs held: \(peakRuns)")
        #expect(engine.slugs.count == engine.runs.count)
        #expect(engine.sessions.count <= 10)
        #expect(engine.history.count <= 8)
        #expect(engine.contendersBySlug.count <= 10)
    }

    @Test("a run silent for longer than GitHub lets a run last is released, written, then let go of")
    func abandonedRunsAreReleased() {
        var engine = BridgeEngine(settings: .pushingEveryChange)
        let start: UnixTime = 1_700_000_000
        let lost = RunScript(runID: 1, start: start, firstJobID: 100)
        let later = RunScript(runID: 2, start: start + 600, firstJobID: 200)
        _ = engine.receive(lost.run("requested", at: 0), at: start)
        _ = engine.receive(lost.job(100, "build", "queued", createdAt: 1), at: start + 1)
        _ = engine.receive(later.run("requested", at: 0), at: start + 600)
        _ = engine.receive(later.job(200, "build", "in_progress", createdAt: 1, startedAt: 2), at: start + 602)
        let lostKey = RunKey(repository: "acme/widgets", runID: 1, attempt: 1)
        let laterKey = RunKey(repository: "acme/widgets", runID: 2, attempt: 1)
        _ = engine.takeChanges()

        engine.forget(at: start + 30 * 86_400)
        #expect(engine.runs[lostKey] != nil)
        #expect(!engine.released.contains(lostKey))

        engine.forget(at: start + 36 * 86_400)
        #expect(engine.released.contains(lostKey))
        #expect(engine.takeChanges().runs.contains(lostKey))
        engine.forget(at: start + 36 * 86_400)
        #expect(engine.runs[lostKey] == nil)
        // The card's owner stays, silent or not: its card decides when it is done.
        #expect(engine.runs[laterKey] != nil)
    }
}
