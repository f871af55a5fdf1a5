import BridgeCore
import Testing

@testable import BridgeDaemon

/// `Publishing`: the snapshot's counts at most every interval with the last change never left
/// out, and each budget level said once.
@Suite("Snapshot publishing")
struct PublishingTests {
    @Test("the first publication counts; within the interval one count is scheduled, then none; after it, again")
    func counts() {
        var publishing = Publishing(board: ServiceSnapshot.Board(ServiceSnapshot(engine: BridgeEngine(), inFlight: 0)))
        let start = ContinuousClock.now
        var decisions: [Publishing.Count] = []
        for offset in [0, 10, 20, 250, 251] { decisions.append(publishing.count(at: start + .milliseconds(offset))) }
        #expect(decisions == [.now, .later, .scheduled, .now, .scheduled])
        publishing.scheduledCountDue()
        decisions = [252, 253].map { publishing.count(at: start + .milliseconds($0)) }
        #expect(decisions == [.now, .later], "the scheduled count, then the next interval's")
        #expect(Publishing.interval == .milliseconds(250))
    }

    @Test("a level is said when it differs from the one said last, with that one; never twice")
    func levels() {
        var publishing = Publishing(board: ServiceSnapshot.Board(ServiceSnapshot(engine: BridgeEngine(), inFlight: 0)))
        let levels: [Fidelity?] = [nil, .steps, .steps, .milestones, nil]
        let said = levels.map { publishing.levelChanged(to: $0) }
        // Nothing in force at start: nothing to say; then each change with the level before it.
        #expect(said == [nil, .some(nil), nil, .some(.steps), .some(.milestones)])
    }
}
