extension BridgeEngine {
    /// Moves time on (completions by grace) and returns every request due now: one per card, in
    /// slug order, none for a card in `inFlight` (its previous request is still out; ten changes
    /// during one request become one follow-up, computed from the latest state when it is sent).
    ///
    /// With a pacer (`RequestPacer`), the requests decided are admitted most important first and
    /// only as many as it has room for; the rest stay dirty, decided again when it has room.
    ///
    /// The gate decides before the reconciler does: while it is closed (quota, rate limit, refused
    /// key, open breaker) nothing goes, and the cards not reached are decided again when it
    /// reopens (its time is a wakeup). A half-open breaker admits one request, its probe. The
    /// daemon's dispatcher and `render` both send what this returns, so a replay follows the
    /// daemon's rules, gate and in-flight rule included.
    ///
    /// - Parameter observe: hears every decision that is not a send, for `explain`.
    public mutating func dueRequests(
        at now: UnixTime, inFlight: Set<String>, observe: ((String, ReconcileDecision) -> Void)? = nil
    ) -> [PlannedRequest] {
        advance(to: now)
        dispatch.beginTurn()
        var wanted: [PlannedRequest] = []
        let candidates = takeDueSlugs(at: now)
        // No room even for an end frame: nothing is decided (deciding is most of a turn's cost,
        // and under a burst thousands of cards may wait); all of it is looked at when room comes.
        if !candidates.isEmpty, !dispatch.hasRoom(for: .ending, at: now) {
            markDirty(candidates)
            dispatch.wait(for: .ending)
            return []
        }
        for (index, slug) in candidates.enumerated() where !inFlight.contains(slug) {
            guard dispatch.blockedUntil(at: now) == nil else {
                markDirty(candidates[index...])
                break
            }
            let decision = decide(slug: slug, at: now)
            guard case .send(let planned) = decision else {
                observe?(slug, decision)
                continue
            }
            wanted.append(planned)
        }
        // The most important first (ends, then starts, then updates, then upkeep), in slug order
        // within a tier: with the pacer short of room, what waits is what matters least.
        let ordered = wanted.enumerated()
            .sorted { (Self.tier(of: $0.element.kind), $0.offset) < (Self.tier(of: $1.element.kind), $1.offset) }
            .map(\.element)
        var due: [PlannedRequest] = []
        for (index, planned) in ordered.enumerated() {
            let tier = Self.tier(of: planned.kind)
            if !dispatch.hasRoom(for: tier, at: now) {
                // Not built again until there is room; whatever changes meanwhile goes with it.
                dispatch.hold(tier)
                markDirty([planned.request.slug])
                continue
            }
            guard admitRequest(at: now) else {
                markDirty(ordered[index...].map(\.request.slug))
                break
            }
            dispatch.admitToPacer(tier, at: now)
            due.append(planned)
        }
        return due
    }

    /// Whether a request may go out now (quota, rate limit, key refused, circuit breaker); claims
    /// the breaker's probe slot when it is half open, so only one probe goes.
    public mutating func admitRequest(at now: UnixTime) -> Bool {
        dispatch.admitRequest(at: now, changes: &changes)
    }

    /// How important a card request is to the pacer (`DispatchControl.tier(of:)`).
    public static func tier(of kind: PlannedRequest.Kind) -> RequestPacer.Tier {
        DispatchControl.tier(of: kind)
    }

    /// Whether a request that is not a card's (a widget, an alert, a read) may go out now, taking
    /// the pacer's room for it (`DispatchControl.admitPaced`).
    public mutating func admitPaced(_ tier: RequestPacer.Tier, at now: UnixTime) -> Bool {
        dispatch.admitPaced(tier, at: now)
    }

    /// PushWard answered `429 rate_limit.exceeded` to any request: every request waits out its
    /// `Retry-After`. Returns when sending resumes.
    @discardableResult
    public mutating func noteRateLimited(retryAfter: Double?, at now: UnixTime) -> UnixTime {
        dispatch.noteRateLimited(retryAfter: retryAfter, at: now, changes: &changes)
    }

    /// Hands over how many requests the pacer held back since the last call, by tier.
    public mutating func takePacerHeld() -> [RequestPacer.Tier: Int] {
        dispatch.takePacerHeld()
    }
}
