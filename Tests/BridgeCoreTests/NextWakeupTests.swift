import BridgeCore
import BridgeTestSupport
import Testing

/// `nextWakeup(after:)` is what the dispatcher sleeps until: the earliest recorded time strictly
/// after now, of completions by grace and cards' own times alike.
@Suite("next wakeup")
struct NextWakeupTests {
    @Test("the earliest due time strictly after now; nil once nothing is due later")
    func earliestAfterNow() {
        var settings = ActivitySettings()
        settings.completionGrace = 100
        var engine = BridgeEngine(settings: settings)
        #expect(engine.nextWakeup(after: 0) == nil)
        let first = RunScript(runID: 1, runNumber: 1, start: 1_000, firstJobID: 10)
        let second = RunScript(runID: 2, runNumber: 2, start: 1_000, firstJobID: 20)
        _ = engine.receive(second.run("requested", at: 0), at: 1_000)
        _ = engine.receive(first.run("requested", at: 0), at: 1_000)
        // Each run's only job finishes: its completion by grace is due 100 s after.
        _ = engine.receive(
            second.job(20, "lint", "completed", createdAt: 0, startedAt: 1, completedAt: 5, conclusion: "success"),
            at: 1_050)
        _ = engine.receive(
            first.job(10, "lint", "completed", createdAt: 0, startedAt: 1, completedAt: 5, conclusion: "success"),
            at: 1_020)
        #expect(engine.nextWakeup(after: 1_060) == 1_120)
        #expect(engine.nextWakeup(after: 1_120) == 1_150, "a time equal to now is due now, not later")
        #expect(engine.nextWakeup(after: 1_149.5) == 1_150)
        #expect(engine.nextWakeup(after: 1_150) == nil)
        engine.advance(to: 1_125)
        #expect(engine.nextWakeup(after: 1_060) == 1_150, "a completion taken leaves the schedule")
    }
}
