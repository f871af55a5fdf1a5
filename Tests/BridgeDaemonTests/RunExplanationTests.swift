import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Testing

@Suite("explain")
struct RunExplanationTests {
    static let waves: [[RunScript.Job]] = [
        [RunScript.Job("lint", duration: 20)],
        [RunScript.Job("test (a)", duration: 60), RunScript.Job("test (b)", duration: 90)],
    ]

    /// The facts `explain` reads, taken from a harness run instead of a database.
    static func facts(_ harness: BridgeHarness, runID: Int, deliveries: [DeliveryRecord] = []) throws
        -> RunExplanation.Facts
    {
        let engine = harness.engine
        let key = try #require(engine.runs.keys.first { $0.runID == runID })
        let state = try #require(engine.runs[key])
        let slug = try #require(engine.slugs[key])
        let session = engine.sessions[slug]
        let pushes = harness.sent.filter { $0.planned.run == key }.map { output in
            PushRecord(
                slug: slug, run: key, kind: output.planned.kind.rawValue,
                method: output.planned.request.method.rawValue,
                path: output.planned.request.path, body: output.planned.request.body.canonicalString, sentAt: output.at,
                status: 200, outcome: "acknowledged", detail: nil)
        }
        return RunExplanation.Facts(
            run: StoredRun(state: state, slug: slug, released: engine.released.contains(key), updatedAt: 0),
            card: session.map { StoredCard(session: $0, floor: nil, desired: nil, updatedAt: 0) }, acknowledged: nil,
            pushes: pushes, deliveries: deliveries, settings: engine.settings)
    }

    @Test("a first run grows live; a second is seeded from it, weighted, and its windows are explained")
    func seededAndWindows() throws {
        var harness = BridgeHarness()
        harness.play(RunScript().deliveries(waves: Self.waves))
        let first = RunExplanation.sentences(try Self.facts(harness, runID: 9_000))
        #expect(first.contains { $0.contains("grew live") })
        #expect(first.contains { $0.contains("equal-width matrix") })
        #expect(first.contains { $0.contains("The run completed (success)") })

        let second = RunScript(runID: 9_001, runNumber: 43, start: 1_700_003_600, firstJobID: 60_000)
        harness.play(second.deliveries(waves: Self.waves))
        let sentences = RunExplanation.sentences(try Self.facts(harness, runID: 9_001))
        #expect(sentences.contains { $0.contains("seeded from run 9000") })
        #expect(sentences.contains { $0.contains("lint 20 s, test 90 s") })
        #expect(sentences.contains { $0.contains("live window") && $0.contains("step 2 (test)") })
        #expect(sentences.contains { $0.contains("holds the card") })
    }

    @Test("a run a newer one took the card from says so")
    func superseded() throws {
        var harness = BridgeHarness()
        let newer = RunScript(runID: 9_500, runNumber: 50, start: 1_700_000_010, firstJobID: 70_000)
        harness.feed(RunScript().job(1, "build", "in_progress", createdAt: 0, startedAt: 1))
        harness.feed(newer.job(70_000, "build", "in_progress", createdAt: 10, startedAt: 11))
        let sentences = RunExplanation.sentences(try Self.facts(harness, runID: 9_000))
        #expect(sentences.contains { $0.contains("does not hold the card: run 9500") })
    }

    @Test("a lost completed delivery is explained as an inferred end")
    func inferred() throws {
        var harness = BridgeHarness()
        harness.play(RunScript().deliveries(waves: Self.waves, complete: false))
        let sentences = RunExplanation.sentences(try Self.facts(harness, runID: 9_000))
        #expect(sentences.contains { $0.contains("completed delivery never arrived") && $0.contains("success") })
    }

    @Test("a delivery: ignored with its reason, rejected with its reason, duplicates counted")
    func deliveries() {
        let ignored = DeliveryRecord(
            id: "d-1", hookID: nil, event: "workflow_job", action: "queued", receivedAt: 1_700_000_000,
            repository: "acme/widgets", runID: 9, runAttempt: 1, outcome: .ignored,
            reason: "branch dependabot/npm matches exclude pattern dependabot/*", contentType: "application/json",
            payload: nil, payloadBytes: 10, duplicates: 2)
        let text = RunExplanation.explain(ignored)
        #expect(text.contains("ignored on purpose: branch dependabot/npm matches exclude pattern dependabot/*"))
        #expect(text.contains("delivered it 2 more times"))
        var rejected = ignored
        rejected.outcome = .rejected
        rejected.reason = "workflow_job.id is missing"
        rejected.duplicates = 0
        #expect(RunExplanation.explain(rejected).contains("rejected: workflow_job.id is missing; GitHub got 400"))
    }
}
