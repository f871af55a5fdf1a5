/// Deciding a card: the one question every dispatch turn asks of the engine, for each card that is
/// due, is "what goes to PushWard for this slug now, or when should I ask again?". The answer is
/// the pure `Reconciler`'s, given what the card should show and what PushWard acknowledged, with
/// the engine's own gates in front of it: the throttle window, the person's slots, and an ended
/// activity's deletion, which goes ahead of anything the card shows. They live here together so
/// the order of those gates reads in one place.
extension BridgeEngine {
    /// The next request for `slug` at `now`, or when to ask again: a due DELETE (`removal`, in
    /// `BridgeEngine+Removal.swift`) goes ahead of anything else; until it is due, the card is
    /// decided for what it shows (a correction may still go) and looked at again when the
    /// deletion is.
    public mutating func decide(slug: String, at now: UnixTime) -> ReconcileDecision {
        switch removal(slug: slug, at: now) {
        case .send(let planned)?:
            cardBook.setDue(slug, at: nil)
            return .send(planned)
        case .wait(let until)?:
            let decision = decideContent(slug: slug, at: now)
            cardBook.setDue(slug, at: min(cardBook.dueTime(of: slug) ?? until, until))
            return decision
        default:
            return decideContent(slug: slug, at: now)
        }
    }

    /// The next request for what the card on `slug` shows at `now`, or when to ask again; `decide`
    /// puts a due deletion ahead of it.
    mutating func decideContent(slug: String, at now: UnixTime) -> ReconcileDecision {
        planSlots(at: now)
        if let quietUntil = throttledUntil(slug: slug, at: now) {
            cardBook.setDue(slug, at: quietUntil)
            return .wait(until: quietUntil)
        }
        // A run without one of its person's slots sends nothing (`BridgeEngine+Slots`).
        if let gated = slotGate(slug: slug, at: now) {
            cardBook.setDue(slug, at: gated.dueAt)
            return slotAdjusted(gated, slug: slug)
        }
        guard let session = cardBook[slug], var desired = desired(slug: slug, at: now) else {
            cardBook.setDue(slug, at: nil)
            return .idle
        }
        let settings = configuration.settings
        if !desired.isFinal { cardBook.applyProgressFloor(to: &desired, slug: slug, changes: &changes) }
        if let dropped = session.droppedFields { desired.dropping(Set(dropped.keys)) }
        let decision = slotAdjusted(
            Reconciler.decide(session: session, desired: desired, settings: settings, now: now), slug: slug)
        // A held change: coalescing and settling count from when it was first seen.
        if case .hold(_, let reason) = decision, reason != .hourlyCap, session.pendingSince == nil {
            cardBook.update(slug, redecide: false, changes: &changes) { $0.pendingSince = now }
        }
        // When to look again if nothing happens: the reconciler's own wait, or the end frame.
        var due = decision.dueAt
        if !desired.isFinal, let owner = session.owner, let completion = runBook[owner]?.completion {
            let endFrameAt = completion.recognizedAt + settings.endDelay
            due = min(due ?? endFrameAt, endFrameAt)
        }
        cardBook.setDue(slug, at: due)
        return decision
    }
}
