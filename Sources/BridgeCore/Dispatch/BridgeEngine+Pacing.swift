/// The request pacer as the engine applies it (`RequestPacer`): which tier each card request is,
/// admission for what is not a card (widgets, alerts, reads), and PushWard's own `429
/// rate_limit.exceeded`, which pauses every kind of request in one place, the dispatch gate.
extension BridgeEngine {
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
    @discardableResult
    public mutating func noteRateLimited(retryAfter: Double?, at now: UnixTime) -> UnixTime {
        let until = now + min(DispatchGate.rateLimitCap, max(1, retryAfter ?? 1))
        if until > gate.rateLimitedUntil ?? 0 {
            gate.rateLimitedUntil = until
            changes.gate = true
        }
        return max(until, gate.rateLimitedUntil ?? until)
    }

    /// Hands over how many requests the pacer held back since the last call, by tier.
    public mutating func takePacerHeld() -> [RequestPacer.Tier: Int] {
        pacer?.takeHeld() ?? [:]
    }
}
