extension BridgeEngine {
    /// Moves time on (completions by grace) and returns every request due now: one per card, in
    /// slug order, none for a card in `inFlight` (its previous request is still out; ten changes
    /// during one request become one follow-up, computed from the latest state when it is sent).
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
        var due: [PlannedRequest] = []
        let candidates = takeDueSlugs(at: now)
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
            guard admitRequest(at: now) else {
                markDirty(candidates[index...])
                break
            }
            due.append(planned)
        }
        return due
    }
}
