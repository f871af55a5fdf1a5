import Testing

@testable import BridgeCore

/// The dispatch feature on its own: the gate every request passes, the pacer, and the key's
/// fingerprint a target refusal is recorded with.
@Suite("dispatch control")
struct DispatchControlTests {
    @Test("a card request's tier: ends, then starts, then updates, then upkeep")
    func tiers() {
        #expect(DispatchControl.tier(of: .end) == .ending)
        #expect(DispatchControl.tier(of: .finalFrame) == .ending)
        #expect(DispatchControl.tier(of: .create) == .starting)
        #expect(DispatchControl.tier(of: .delete) == .starting)
        #expect(DispatchControl.tier(of: .update) == .updating)
        #expect(DispatchControl.tier(of: .heartbeat) == .upkeep)
    }

    @Test(
        "a 429 pauses everything for its Retry-After, at least a second and at most the cap; only a longer one moves the gate"
    )
    func rateLimit() {
        var control = DispatchControl()
        var changes = EngineChanges()
        let until = control.noteRateLimited(retryAfter: 10_000, at: 100, changes: &changes)
        #expect(until == 100 + DispatchGate.rateLimitCap)
        #expect(changes.gate)
        let paused = control.admitPaced(.reading, at: 150)
        #expect(!paused)
        #expect(control.blockedUntil(at: 150) == 100 + DispatchGate.rateLimitCap)

        var shorter = EngineChanges()
        let still = control.noteRateLimited(retryAfter: 0, at: 110, changes: &shorter)
        #expect(still == 100 + DispatchGate.rateLimitCap)
        #expect(!shorter.gate, "a shorter pause leaves the gate as it was")
        let resumed = control.admitPaced(.reading, at: 100 + DispatchGate.rateLimitCap)
        #expect(resumed)
    }

    @Test("a refused key waits longer each time; a success ends it and the breaker's count, once")
    func refusedKey() {
        var control = DispatchControl()
        var changes = EngineChanges()
        let first = control.refuseKey(reason: "401", at: 0, changes: &changes)
        let second = control.refuseKey(reason: "401", at: first, changes: &changes)
        #expect(first == DispatchGate.firstAuthPause)
        #expect(second - first == 2 * DispatchGate.firstAuthPause)
        var admitted = EngineChanges()
        let refused = control.admitRequest(at: first + 1, changes: &admitted)
        #expect(!refused)

        var success = EngineChanges()
        control.recordSuccess(changes: &success)
        #expect(success.gate)
        #expect(control.gate.authFailures == 0 && control.gate.reason == nil)
        let admittedNow = control.admitRequest(at: first + 1, changes: &admitted)
        #expect(admittedNow)
        var again = EngineChanges()
        control.recordSuccess(changes: &again)
        #expect(!again.gate, "nothing to reset: the gate is not written")
    }

    @Test("failures open the breaker, said once; a spent quota closes the gate until its reset")
    func breakerAndQuota() {
        var control = DispatchControl()
        var changes = EngineChanges()
        var opened: [Bool] = []
        for attempt in 0..<CircuitBreaker.threshold {
            opened.append(control.recordFailure(at: Double(attempt), changes: &changes))
        }
        #expect(opened == Array(repeating: false, count: CircuitBreaker.threshold - 1) + [true])
        #expect(control.gate.breaker.state == .open)

        var quota = DispatchControl()
        quota.pauseForQuota(until: 500, reason: "quota", changes: &changes)
        #expect(quota.gate.quotaExhausted(at: 499))
        #expect(quota.nextWakeup(after: 100) == 500)
        #expect(quota.nextWakeup(after: 500) == nil)
    }

    @Test("a target refusal holds for the key it was recorded with, not for another")
    func targets() {
        var control = DispatchControl()
        var changes = EngineChanges()
        control.useKey(fingerprint: "aaaa", changes: &changes)
        #expect(!changes.gate)
        let refused = control.refuseTargets(at: 10, changes: &changes)
        let again = control.refuseTargets(at: 20, changes: &changes)
        #expect(refused)
        #expect(!again, "refused once, recorded once")
        #expect(control.targetsRefused && control.gate.targetsRefusedKey == "aaaa")

        var same = EngineChanges()
        control.useKey(fingerprint: "aaaa", changes: &same)
        #expect(control.targetsRefused && !same.gate)
        var other = EngineChanges()
        control.useKey(fingerprint: "bbbb", changes: &other)
        #expect(!control.targetsRefused && other.gate)
    }

    @Test("the pacer's room is taken by what it admits; unpaced, there is always room")
    func pacer() {
        var control = DispatchControl()
        #expect(control.hasRoom(for: .upkeep, at: 0))
        let unpaced = control.admitPaced(.upkeep, at: 0)
        #expect(unpaced)
        control.use(pacer: RequestPacer(settings: .init(limit: 2, window: 60)))
        control.admitToPacer(.ending, at: 0)
        control.admitToPacer(.ending, at: 0)
        #expect(!control.hasRoom(for: .ending, at: 1))
        let full = control.admitPaced(.reading, at: 1)
        #expect(!full)
        control.hold(.updating)
        let held = control.takePacerHeld()
        #expect(held[.updating] == 1)
        #expect(control.nextWakeup(after: 1) != nil)
    }
}
