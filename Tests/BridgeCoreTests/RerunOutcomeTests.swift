import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

/// A re-run that passes after its attempt failed says so: `Passed on re-run (attempt 2)` on its
/// final frame and in the "fixed" alert, and the run is marked flaky with the jobs that failed.
@Suite("passed on re-run")
struct RerunOutcomeTests {
    @Test("attempt 1 fails, attempt 2 passes: the final frame, the fixed alert and flaky with the failed jobs")
    func passedOnRerun() throws {
        var engine = AlertTests.engine([AlertRule(when: [.failure, .fixed])])
        var history = RunHistory()
        let first = RunScript(runID: 70, attempt: 1)
        let waves = [
            [RunScript.Job("lint")], [RunScript.Job("test (a)", conclusion: "failure"), RunScript.Job("test (b)")],
        ]
        let failure = AlertTests.play(first.deliveries(waves: waves), on: &engine, history: &history)
        #expect(failure.map(\.reason) == [.failure])
        var second = RunScript(runID: 70, attempt: 2, start: first.start + 600, firstJobID: 60_000)
        second.runNumber = first.runNumber
        let passing = [[RunScript.Job("lint")], [RunScript.Job("test (a)"), RunScript.Job("test (b)")]]
        let fixed = AlertTests.play(second.deliveries(waves: passing), on: &engine, history: &history)
        let alert = try #require(fixed.first { $0.reason == .fixed })
        #expect(alert.body["body"]?.stringValue?.contains("Passed on re-run (attempt 2)") == true, "\(alert.body)")
        let key = RunKey(repository: "acme/widgets", runID: 70, attempt: 2)
        let state = try #require(engine.runs[key])
        #expect(state.passedOnRerun)
        #expect(state.failedBefore == ["test (a)"])
        let slug = try #require(engine.slugs[key])
        let final = try #require(engine.desired(slug: slug, at: state.lastChangeAt + 3_600))
        #expect(final.content["state"] == "Passed on re-run (attempt 2)")
        #expect(final.content["accent_color"] == "green")
    }

    @Test("a re-run after a success, or a first attempt, is simply green")
    func notFlaky() throws {
        var engine = AlertTests.engine([])
        var history = RunHistory()
        let first = RunScript(runID: 71, attempt: 1)
        _ = AlertTests.play(first.deliveries(waves: [[RunScript.Job("lint")]]), on: &engine, history: &history)
        let second = RunScript(runID: 71, attempt: 2, start: first.start + 600, firstJobID: 61_000)
        _ = AlertTests.play(second.deliveries(waves: [[RunScript.Job("lint")]]), on: &engine, history: &history)
        for attempt in [1, 2] {
            let state = try #require(engine.runs[RunKey(repository: "acme/widgets", runID: 71, attempt: attempt)])
            #expect(!state.passedOnRerun && state.failedBefore == nil, "attempt \(attempt)")
        }
    }
}
