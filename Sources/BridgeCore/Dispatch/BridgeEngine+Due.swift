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
        pacer?.beginTurn()
        var wanted: [PlannedRequest] = []
        let candidates = takeDueSlugs(at: now)
        // No room even for an end frame: nothing is decided (deciding is most of a turn's cost,
        // and under a burst thousands of cards may wait); all of it is looked at when room comes.
        if let pacer, !candidates.isEmpty, !pacer.hasRoom(for: .ending, at: now) {
            markDirty(candidates)
            self.pacer?.wait(for: .ending)
            return []
        }
        for (index, slug) in candidates.enumerated() where !inFlight.contains(slug) {
            guard gate.blockedUntil(at: now) == nil else {
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
            if let pacer, !pacer.hasRoom(for: tier, at: now) {
                // Not built again until there is room; whatever changes meanwhile goes with it.
                self.pacer?.hold(tier)
                markDirty([planned.request.slug])
                continue
            }
            guard admitRequest(at: now) else {
                markDirty(ordered[index...].map(\.request.slug))
                break
            }
            _ = pacer?.admit(tier, at: now)
            due.append(planned)
        }
        return due
    }
}
