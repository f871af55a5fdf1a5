import BridgeTestSupport
import Testing

@testable import BridgeCore

/// The alert feature on its own: what a change of a run may alert for, the runs waiting to be
/// planned, and the buttons an alert carries.
@Suite("alert book")
struct AlertBookTests {
    typealias F = EngineFeatureFixtures

    @Test("runs wait to be planned in key order, each once, with every reason noted")
    func pending() {
        var book = AlertBook()
        let first = RunKey(repository: "acme/a", runID: 1, attempt: 1)
        let second = RunKey(repository: "acme/a", runID: 2, attempt: 1)
        book.check(second, for: [.failure])
        book.check(first, for: [])
        #expect(book.pending.map(\.0) == [second], "no reason, nothing to plan")
        book.check(first, for: [.fixed])
        book.check(second, for: [.waiting])
        #expect(book.pending.map(\.0) == [first, second])
        #expect(book.pending.last?.1 == [.failure, .waiting])
        book.planned(first)
        #expect(book.pending.map(\.0) == [second])
    }

    @Test("a completion alerts for a failure or a possible fix; nothing else does")
    func completions() {
        let script = RunScript(runID: 1)
        let going = F.running(script)
        #expect(AlertBook.transitions(from: going, to: F.finished(script, conclusion: "failure")) == [.failure])
        #expect(AlertBook.transitions(from: going, to: F.finished(script)) == [.fixed])
        #expect(AlertBook.transitions(from: going, to: F.finished(script, conclusion: "cancelled")).isEmpty)
        let finished = F.finished(script, conclusion: "failure")
        #expect(AlertBook.transitions(from: finished, to: finished).isEmpty, "finishing again alerts for nothing")
    }

    @Test("a job that begins to wait asks for a review, once the run's origin is known")
    func waiting() {
        let script = RunScript(runID: 1)
        let waitingJob = script.job(
            script.firstJobID + 5, "deploy", "waiting", createdAt: 40, environment: "production")
        let before = F.running(script)
        let after = F.state(
            script, script.deliveries(waves: [[RunScript.Job("build")]], complete: false) + [waitingJob])
        #expect(AlertBook.transitions(from: before, to: after) == [.waiting])
        #expect(AlertBook.transitions(from: after, to: after).isEmpty, "still waiting: asked once")

        let unknown = F.state(script, [waitingJob])
        #expect(unknown.origin == .unknown)
        #expect(
            AlertBook.transitions(from: RunState(key: unknown.key, repository: script.repository, at: 0), to: unknown)
                .isEmpty)
    }

    @Test("an alert's buttons: a re-run on a failure, Approve and Reject on a review, and only what is offered")
    func buttons() {
        let settings = ActionSettings(publicURL: "https://hooks.example.com")
        #expect(AlertBook.notificationActions(for: .failure, offers: [.rerun], settings: nil).isEmpty)
        #expect(AlertBook.notificationActions(for: .failure, offers: [.rerun], settings: settings).count == 1)
        #expect(AlertBook.notificationActions(for: .failure, offers: [.cancel], settings: settings).isEmpty)
        #expect(AlertBook.notificationActions(for: .waiting, offers: [.approve], settings: settings).count == 2)
        #expect(AlertBook.notificationActions(for: .fixed, offers: [.rerun, .approve], settings: settings).isEmpty)
    }
}
