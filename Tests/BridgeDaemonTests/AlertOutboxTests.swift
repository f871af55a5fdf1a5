import BridgeCore
import Testing

@testable import BridgeDaemon

/// `AlertOutbox`: when the alert sender looks at the store again, and the pauses that hold it.
@Suite("The alert outbox")
struct AlertOutboxTests {
    @Test("nothing pending: closed, no wake-up; planned alerts are due at once, never later than known")
    func planning() {
        var outbox = AlertOutbox()
        let early = outbox.opens(at: 100)
        #expect(!early)
        #expect(outbox.nextWakeup == nil)
        outbox.planned(at: 100)
        #expect(outbox.nextDue == 100)
        outbox.planned(at: 150)
        #expect(outbox.nextDue == 100, "an earlier due stays")
        let before = outbox.opens(at: 99.9)
        #expect(!before)
        let due = outbox.opens(at: 100)
        #expect(due)
    }

    @Test("a pause holds everything until it ends, is said once, extends but never shortens, and lifts itself")
    func pauses() {
        var outbox = AlertOutbox(nextDue: 10)
        let said = outbox.pause(until: 100, why: "quota")
        #expect(said, "the first pause is said")
        let saidAgain = outbox.pause(until: 50, why: "quota again")
        #expect(!saidAgain, "said once while it lasts")
        #expect(outbox.pausedUntil == 100, "a shorter pause does not shorten it")
        #expect(outbox.pauseReason == "quota again")
        #expect(outbox.nextWakeup == 100, "the dispatcher sleeps until the pause ends")
        let paused = outbox.opens(at: 99)
        #expect(!paused)
        let ended = outbox.opens(at: 100)
        #expect(ended)
        #expect(outbox.pausedUntil == nil && outbox.pauseReason == nil, "an ended pause is lifted")
        let saidAnew = outbox.pause(until: 200, why: "refused")
        #expect(saidAnew, "a new pause is said again")
    }

    @Test("after handing alerts out: the store's next due, or a second from now while one is out or held")
    func rescheduling() {
        var outbox = AlertOutbox(nextDue: 0)
        outbox.reschedule(stored: 500, held: false, pacedRoom: nil, at: 100)
        #expect(outbox.nextDue == 500)
        outbox.reschedule(stored: nil, held: false, pacedRoom: nil, at: 100)
        #expect(outbox.nextDue == nil, "none pending")

        // Due now in the store (an alert whose card is being created): a second from now.
        outbox.reschedule(stored: 90, held: true, pacedRoom: nil, at: 100)
        #expect(outbox.nextDue == 101)
        // Not held and none out: just after now, so a loop never spins on the same instant.
        outbox.reschedule(stored: 90, held: false, pacedRoom: nil, at: 100)
        #expect(outbox.nextDue == 100.001)

        outbox.handOut([7])
        #expect(outbox.isOut(7) && !outbox.isOut(8))
        outbox.reschedule(stored: 100, held: false, pacedRoom: nil, at: 100)
        #expect(outbox.nextDue == 101, "with a POST out, due-now waits a second")
        outbox.reschedule(stored: 300, held: false, pacedRoom: 160, at: 100)
        #expect(outbox.nextDue == 160, "the pacer's room comes first")
        outbox.reschedule(stored: nil, held: false, pacedRoom: 160, at: 100)
        #expect(outbox.nextDue == 160)

        outbox.finished(7)
        #expect(!outbox.isOut(7))
    }

    @Test("an answer brings an earlier stored due forward; an unreadable store is asked again in five seconds")
    func answersAndFailures() {
        var outbox = AlertOutbox(nextDue: 300)
        outbox.answered(stored: 200)
        #expect(outbox.nextDue == 200)
        outbox.answered(stored: 400)
        #expect(outbox.nextDue == 200)
        outbox.answered(stored: nil)
        #expect(outbox.nextDue == 200)
        outbox.unreadable(at: 1_000)
        #expect(outbox.nextDue == 1_005)
    }
}
