import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Testing

/// What `explain` and the JSON documents say of a run's slot: a card, a summary entry, preempted.
@Suite("explain: slots")
struct PlacementExplanationTests {
    /// Seven runs of seven repositories live at once: five slots, so four cards and the summary.
    static func harness() -> BridgeHarness {
        var harness = BridgeHarness()
        for index in 1...7 {
            var script = RunScript(
                runID: 9_100 + index, start: 1_700_000_000 + Double(index) * 10, firstJobID: 60_000 + index * 10)
            script.repository = Repository(
                fullName: "acme/repo-\(index)", htmlURL: "https://github.com/acme/repo-\(index)",
                defaultBranch: "main")
            harness.play([
                script.run("in_progress", at: 0), script.job(script.firstJobID, "build", "in_progress", createdAt: 0),
            ])
        }
        return harness
    }

    @Test("a run with a card, and one counted on the summary, each say so with their time")
    func sentences() throws {
        let harness = Self.harness()
        // Runs 2–5 keep the cards they showed (a newer run of the same class does not take one);
        // run 1, the oldest, gave its slot to the summary card, which counts it and runs 6 and 7.
        let onCard = try RunExplanation.sentences(RunExplanationTests.facts(harness, runID: 9_105))
        #expect(
            onCard.contains { $0.hasPrefix("It holds one of its person's 5 ongoing cards (ranked default branch)") })
        let places = harness.engine.runs.values.compactMap(\.placement?.place)
        #expect(places.filter { $0 == .card }.count == 4)
        let newest = try RunExplanation.sentences(RunExplanationTests.facts(harness, runID: 9_107))
        #expect(newest.contains { $0.contains("is counted on the summary card (ranked default branch) since") })
        #expect(newest.contains { $0.hasPrefix("It owns the card, which does not show while the run has no slot") })
        // The oldest run lost its slot to the summary card.
        let oldest = try RunExplanation.sentences(RunExplanationTests.facts(harness, runID: 9_101))
        #expect(
            oldest.contains {
                $0.contains("counted on the summary card") || $0.hasPrefix("PushWard preempted its card")
            }, "\(oldest)")
        #expect(oldest.contains { $0.contains("It had a card from 2023-11-14T22:13:30Z") }, "\(oldest)")
    }

    @Test("the JSON placement carries every time, null when unset")
    func json() {
        var placement = CardPlacement(place: .preempted, since: 100, rank: .failing)
        placement.cardAt = 50
        placement.preemptedAt = 100
        placement.preemptions = 1
        #expect(
            placement.json
                == [
                    "place": "preempted", "since": 100, "rank": "failing", "card_at": 50, "summary_at": nil,
                    "preempted_at": 100, "preemptions": 1, "restarted_at": nil,
                ])
        #expect(placement.summaryLine(formatTime: { String(Int($0)) }).contains("preempted at 100"))
    }
}
