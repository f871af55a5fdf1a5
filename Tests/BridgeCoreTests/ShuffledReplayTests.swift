import BridgeTestSupport
import Testing

@testable import BridgeCore

/// The orders the end-to-end test "deliveries shuffled and duplicated" sends the daemon, replayed
/// through the pure core with that test's settings and at several arrival paces: the final card
/// depends on the set of deliveries only, never on their order or on how fast they came (a loaded
/// machine spaces them out, so more of them land after the end frame and become corrections).
@Suite("Shuffled replays of the end-to-end run")
struct ShuffledReplayTests {
    static let waves: [[RunScript.Job]] = [
        [RunScript.Job("lint", duration: 20)],
        [RunScript.Job("test (a)", duration: 60), RunScript.Job("test (b)", duration: 90)],
        [RunScript.Job("deploy", duration: 30)],
    ]

    /// The end-to-end test's `pushward` settings: every change at once, one PATCH a second at most,
    /// the end frame and the end without delay.
    static var settings: ActivitySettings {
        var settings = ActivitySettings.pushingEveryChange
        settings.minUpdateInterval = 1
        settings.endDelay = 0
        settings.endDisplayTime = 0
        return settings
    }

    /// The card PushWard holds once `events` arrived `gap` seconds apart, long after the run ran
    /// (as in the end-to-end test, whose script starts ten minutes in the past).
    static func finalCard(_ events: [WebhookEvent], gap: Double) -> (StoredActivity?, BridgeHarness) {
        var harness = BridgeHarness(settings: settings)
        let arrival = 1_700_000_000.0 + 600
        for (index, event) in events.enumerated() { harness.feed(event, at: arrival + Double(index) * gap) }
        harness.finish()
        return (harness.stored(), harness)
    }

    @Test(
        "the end-to-end test's shuffled orders end on the in-order card, however fast they arrive",
        arguments: [0.01, 0.3, 0.9, 1.5, 4])
    func sameCardAtEveryPace(gap: Double) {
        let script = RunScript(start: 1_700_000_000)
        let events = script.deliveries(waves: Self.waves)
        let (expected, reference) = Self.finalCard(events, gap: gap)
        #expect(expected?.state == "ended")
        #expect(reference.violations.isEmpty)
        var corrected = 0
        for replay in ShuffledReplay.orders(count: events.count, seed: 7, rounds: 2) {
            let (card, harness) = Self.finalCard(replay.order.map { events[$0] }, gap: gap)
            #expect(harness.violations.isEmpty, "\(replay.description)")
            #expect(card == expected, "\(replay.description), \(gap) s apart")
            corrected += harness.sent.filter { $0.planned.kind == .correction }.count
        }
        // The orders put deliveries after the run's end: the card is put right after it ended.
        #expect(corrected > 0)
    }
}
