import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

/// GitHub does not order deliveries and may repeat them: the same set, in any order, with any
/// duplicates, must end in the same state and the same final card.
@Suite("Order independence")
struct OrderIndependenceTests {
    /// The real five-delivery sequence of a re-run (attempt 10) recorded from GitHub.
    static func recordedSequence() throws -> [WebhookEvent] {
        try [
            "workflow_job.queued.attempt10-pre-commit.json", "workflow_job.completed.attempt10-pre-commit.json",
            "workflow_job.queued.attempt10-test.json", "workflow_job.completed.attempt10-test.json",
            "workflow_run.completed.attempt10.json",
        ].map { name in
            let event = String(name.prefix { $0 != "." })
            return try WebhookDecoder.decode(event: event, body: Fixtures.data(name), contentType: "application/json")
        }
    }

    static func scriptedSequence() -> [WebhookEvent] {
        RunScript().deliveries(waves: [
            [RunScript.Job("lint", duration: 15)],
            (1...4).map { RunScript.Job("test (\($0))", duration: Double(20 * $0)) },
            [RunScript.Job("call / package (a)", duration: 40), RunScript.Job("call / package (b)", duration: 45)],
            [RunScript.Job("deploy", duration: 30)],
        ])
    }

    /// What must not depend on arrival: each run's GitHub-derived state and the final card.
    struct Outcome: Equatable {
        var jobs: [RunKey: [JobRecord]]
        var runs: [RunKey: WorkflowRun?]
        var conclusions: [RunKey: String?]
        var cards: [String: StoredActivity]
    }

    static func outcome(of events: [WebhookEvent]) -> (Outcome, BridgeHarness) {
        var harness = BridgeHarness()
        harness.play(events)
        let engine = harness.engine
        let outcome = Outcome(
            jobs: engine.runs.mapValues { $0.workflowJobs }, runs: engine.runs.mapValues(\.run),
            conclusions: engine.runs.mapValues { $0.completion?.conclusion },
            cards: harness.server.activities.mapValues { stored in
                // The window's timestamps are wall-clock anchors of the last step change; the
                // card's content is what must agree.
                var stored = stored
                stored.content["start_date"] = nil
                stored.content["end_date"] = nil
                return stored
            })
        return (outcome, harness)
    }

    @Test("the recorded re-run, shuffled and duplicated 200 times, always ends the same", arguments: [1, 2, 3, 4])
    func recordedPermutations(seedBase: Int) throws {
        try checkPermutations(of: Self.recordedSequence(), seed: UInt64(seedBase), rounds: 50)
    }

    @Test("a scripted matrix run, shuffled and duplicated 200 times, always ends the same", arguments: [5, 6, 7, 8])
    func scriptedPermutations(seedBase: Int) throws {
        try checkPermutations(of: Self.scriptedSequence(), seed: UInt64(seedBase), rounds: 50)
    }

    func checkPermutations(of events: [WebhookEvent], seed: UInt64, rounds: Int) throws {
        let (expected, reference) = Self.outcome(of: events)
        #expect(reference.violations.isEmpty)
        #expect(expected.cards.values.allSatisfy { $0.state == "ended" && $0.content["progress"] == 1 })
        var generator = SplitMix64(seed: seed)
        for round in 0..<rounds {
            var shuffled = events
            for _ in 0..<Int.random(in: 0...events.count, using: &generator) {
                shuffled.append(events.randomElement(using: &generator)!)
            }
            shuffled.shuffle(using: &generator)
            let (actual, harness) = Self.outcome(of: shuffled)
            #expect(harness.violations.isEmpty, "seed \(seed) round \(round)")
            #expect(actual == expected, "seed \(seed) round \(round)")
            if actual != expected { return }
        }
    }

    @Test("shuffled deliveries cost only a few more requests than the in-order run")
    func requestCountStaysClose() {
        let events = Self.scriptedSequence()
        let inOrder = Self.outcome(of: events).1.sent.count
        var generator = SplitMix64(seed: 99)
        for _ in 0..<20 {
            let shuffled = events.shuffled(using: &generator)
            let count = Self.outcome(of: shuffled).1.sent.count
            #expect(count <= inOrder + 3, "in order \(inOrder), shuffled \(count)")
        }
    }
}
