/// The engine's dispatch feature: what holds back every request at once (the `DispatchGate`:
/// quota, rate limit, refused key, circuit breaker), the pacer that keeps requests under
/// PushWard's per-minute limit, and the fingerprint of the key they go out with. Cards, widgets,
/// alerts and reads all ask it before they go; only it moves the gate.
///
/// Every method that moves the gate says so in `changes` (`EngineChanges.gate`): the store writes
/// the gate then, so a restart does not forget a spent quota.
public struct DispatchControl: Sendable {
    public private(set) var gate = DispatchGate()
    /// Keeps the requests to PushWard under its per-minute limit (`pushward.requests_per_minute`);
    /// nil: unpaced (the core's own tests, `render`). Not stored: a restart starts a new window.
    public private(set) var pacer: RequestPacer?
    /// The configured API key's fingerprint (`useKey`), recorded with a refused target.
    public private(set) var keyFingerprint: String?

    public init() {}

    /// Puts back the gate read from storage.
    public mutating func restore(gate: DispatchGate) {
        self.gate = gate
    }

    /// Paces requests with `pacer` from now on (nil: unpaced).
    public mutating func use(pacer: RequestPacer?) {
        self.pacer = pacer
    }

    /// Whether targets are refused: cards and alerts then go to everyone the key reaches.
    public var targetsRefused: Bool { gate.targetsRefusedAt != nil }

    /// How important a card request is to the pacer: a run's end before its start, its start
    /// before its updates, upkeep last.
    public static func tier(of kind: PlannedRequest.Kind) -> RequestPacer.Tier {
        switch kind {
        case .end, .finalFrame: .ending
        case .create, .firstFrame, .delete: .starting
        case .update, .correction: .updating
        case .heartbeat: .upkeep
        }
    }

    /// Set to the configured key's fingerprint: a refusal recorded for another key no longer
    /// holds, so targets are tried again (a personal key replaced by an organisation one).
    public mutating func useKey(fingerprint: String?, changes: inout EngineChanges) {
        keyFingerprint = fingerprint
        if gate.targetsRefusedAt != nil, gate.targetsRefusedKey != fingerprint {
            gate.targetsRefusedAt = nil
            gate.targetsRefusedKey = nil
            changes.gate = true
        }
    }

    /// PushWard refused a `target`: from now on nothing carries one. False when that was known.
    public mutating func refuseTargets(at now: UnixTime, changes: inout EngineChanges) -> Bool {
        guard gate.targetsRefusedAt == nil else { return false }
        gate.targetsRefusedAt = now
        gate.targetsRefusedKey = keyFingerprint
        changes.gate = true
        return true
    }

    /// Whether a request may go out now (quota, rate limit, key refused, circuit breaker); claims
    /// the breaker's probe slot when it is half open, so only one probe goes.
    public mutating func admitRequest(at now: UnixTime, changes: inout EngineChanges) -> Bool {
        guard gate.blockedUntil(at: now) == nil else { return false }
        let before = gate.breaker
        let admitted = gate.breaker.admit(at: now)
        if gate.breaker != before { changes.gate = true }
        return admitted
    }

    /// Whether a request that is not a card's (a widget, an alert, a read) may go out now: never
    /// while PushWard's rate limit pauses everything, and only with room in the pacer, which it
    /// then takes. A request refused here is asked again when the pacer says (`nextWakeup`).
    public mutating func admitPaced(_ tier: RequestPacer.Tier, at now: UnixTime) -> Bool {
        if let until = gate.rateLimitedUntil, now < until { return false }
        return pacer?.admit(tier, at: now) ?? true
    }

    /// PushWard answered `429 rate_limit.exceeded` to any request (someone else used the key's
    /// minute, or a clock ran ahead): every request waits out its `Retry-After` (at least a
    /// second, at most `DispatchGate.rateLimitCap`). Returns when sending resumes.
    public mutating func noteRateLimited(retryAfter: Double?, at now: UnixTime, changes: inout EngineChanges)
        -> UnixTime
    {
        let until = now + min(DispatchGate.rateLimitCap, max(1, retryAfter ?? 1))
        if until > gate.rateLimitedUntil ?? 0 {
            gate.rateLimitedUntil = until
            changes.gate = true
        }
        return max(until, gate.rateLimitedUntil ?? until)
    }

    /// A 2xx: the breaker closes, a refused key's pauses are over.
    public mutating func recordSuccess(changes: inout EngineChanges) {
        guard gate.breaker.state != .closed || gate.authFailures > 0 || gate.reason != nil else { return }
        gate.breaker.recordSuccess()
        gate.authFailures = 0
        gate.authBlockedUntil = nil
        gate.reason = nil
        changes.gate = true
    }

    /// `429 quota.exceeded`: nothing goes before `until`.
    public mutating func pauseForQuota(until: UnixTime, reason: String, changes: inout EngineChanges) {
        gate.quotaPausedUntil = until
        gate.reason = reason
        changes.gate = true
    }

    /// `401`/`403`: every request waits, longer with every refusal in a row. Returns until when.
    public mutating func refuseKey(reason: String, at now: UnixTime, changes: inout EngineChanges) -> UnixTime {
        gate.authFailures += 1
        let pause = min(
            DispatchGate.longestAuthPause, DispatchGate.firstAuthPause * Double(1 << min(gate.authFailures - 1, 10)))
        let until = now + pause
        gate.authBlockedUntil = until
        gate.reason = reason
        changes.gate = true
        return until
    }

    /// No answer, or a 5xx: the breaker counts it. Returns whether this failure opened it.
    public mutating func recordFailure(at now: UnixTime, changes: inout EngineChanges) -> Bool {
        let wasOpen = gate.breaker.state == .open
        gate.breaker.recordFailure(at: now)
        changes.gate = true
        return !wasOpen && gate.breaker.state == .open
    }

    /// When sending may resume; nil when it may now.
    public func blockedUntil(at now: UnixTime) -> UnixTime? { gate.blockedUntil(at: now) }

    /// A new dispatch turn for the pacer.
    public mutating func beginTurn() { pacer?.beginTurn() }

    /// Whether the pacer has room for `tier` (always, unpaced).
    public func hasRoom(for tier: RequestPacer.Tier, at now: UnixTime) -> Bool {
        pacer?.hasRoom(for: tier, at: now) ?? true
    }

    /// Nothing of `tier` could be decided for want of room: the pacer wakes the turn for it.
    public mutating func wait(for tier: RequestPacer.Tier) { pacer?.wait(for: tier) }

    /// A request of `tier` was held back for want of room.
    public mutating func hold(_ tier: RequestPacer.Tier) { pacer?.hold(tier) }

    /// Takes the pacer's room for one request of `tier` (none needed, unpaced).
    public mutating func admitToPacer(_ tier: RequestPacer.Tier, at now: UnixTime) {
        _ = pacer?.admit(tier, at: now)
    }

    /// Hands over how many requests the pacer held back since the last call, by tier.
    public mutating func takePacerHeld() -> [RequestPacer.Tier: Int] {
        pacer?.takeHeld() ?? [:]
    }

    /// The earliest time after `now` at which the gate reopens or the pacer has room for what it
    /// held.
    public func nextWakeup(after now: UnixTime) -> UnixTime? {
        let reopens = gate.blockedUntil(at: now).flatMap { $0 > now ? $0 : nil }
        let room = pacer?.nextWakeup(after: now).flatMap { $0 > now ? $0 : nil }
        return [reopens, room].compactMap { $0 }.min()
    }
}
