/// The account's room: PushWard keeps at most 50 activities an account, ended ones included until
/// they are deleted, and refuses a create beyond (`409 activity.limit_exceeded`). Its own deletion
/// after `ended_ttl` may come late, and with a repository or workflow per card an organisation's
/// hook soon has more than 50 slugs. So the bridge deletes its own ended activities once they
/// lingered `ended_ttl`, and when a create meets the cap anyway it deletes its oldest ended one at
/// once and creates again.
///
/// It only ever deletes what it created and ended itself: a card of its own (a session, stored in
/// its database) whose `state: ended` PushWard acknowledged. Like every other request the DELETE
/// is desired state: decided here from the stored session, sent once per decision, its answer
/// recorded (a 404 is as good as a 2xx). A crash before the answer is recorded decides the same
/// DELETE again, which deletes nothing twice.
extension BridgeEngine {
    /// When the ended activity on this card is to be deleted; nil when there is nothing to delete
    /// (not ended, never acknowledged, deleted already, a run took the card again, or PushWard
    /// refused the DELETE). Lingering counts from the acknowledged end; a create waiting for room
    /// asks for it at once; a failed attempt waits for its backoff.
    public static func deletionDue(_ session: ActivitySession, settings: ActivitySettings) -> UnixTime? {
        guard session.phase == .ended, session.acknowledged != nil, session.deletedAt == nil, session.owner != nil,
            session.rejectedBody != JSONValue.null
        else { return nil }
        let endedAt = session.endedAt ?? session.finalShownAt ?? session.lastPatchAt ?? 0
        let lingered = endedAt + Double(settings.endedTTL)
        let due = min(session.deletionRequestedAt ?? lingered, lingered)
        return max(due, session.retryAt ?? due)
    }

    /// The DELETE of `slug`'s ended activity when it is due at `now`, when it will be (`.wait`),
    /// or nil when there is nothing to delete.
    public func removal(slug: String, at now: UnixTime) -> ReconcileDecision? {
        guard let session = cardBook[slug], let owner = session.owner,
            let due = Self.deletionDue(session, settings: configuration.settings)
        else { return nil }
        guard now >= due else { return .wait(until: due) }
        return .send(
            PlannedRequest(
                request: PushWardRequest(method: .delete, slug: slug, body: .null), kind: .delete, run: owner))
    }

    /// The next request for `slug` at `now`, or when to ask again: a due DELETE goes ahead of
    /// anything else; until it is due, the card is decided for what it shows (a correction may
    /// still go) and looked at again when the deletion is.
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

    /// PushWard took the DELETE (or had no such activity): the card holds nothing on the account
    /// any more, and every create that waited for room is tried again now.
    mutating func acknowledgeDeletion(_ planned: PlannedRequest, at now: UnixTime) {
        let slug = planned.request.slug
        if let session = cardBook[slug], session.owner == planned.run, session.phase == .ended,
            session.deletedAt == nil
        {
            cardBook.update(slug, changes: &changes) { session in
                session.deletedAt = now
                session.acknowledged = nil
                session.deletionRequestedAt = nil
                session.retryAt = nil
                session.failures = 0
            }
        }
        for waiter in cardBook.slugs(where: { $1.waitsForRoom == true && $1.phase == .needsCreate }) {
            cardBook.update(waiter, changes: &changes) { $0.retryAt = nil }
        }
    }

    /// A create met the account's cap (`409`). One ended activity of the bridge's is deleted at
    /// once for each create waiting, the oldest first, never one it did not create; the create
    /// then waits for that deletion's answer (or, with nothing of its own to delete, retries on a
    /// backoff until something ends). The wait is the card's `lastProblem`, which `runs show` and
    /// `explain` print.
    mutating func roomRefused(
        _ problem: PushWardProblem, for planned: PlannedRequest, at now: UnixTime, jitter: Double
    ) -> AnswerEffect {
        let slug = planned.request.slug
        let settings = configuration.settings
        let waiting =
            cardBook.slugs(where: { $0 != slug && $1.waitsForRoom == true && $1.phase == .needsCreate }).count + 1
        let freeing = cardBook.slugs(where: {
            $1.deletionRequestedAt != nil && Self.deletionDue($1, settings: settings) != nil
        })
        .count
        var victim: String?
        if freeing < waiting {
            victim =
                cardBook.sessions.filter {
                    $0.key != slug && $0.value.deletionRequestedAt == nil
                        && Self.deletionDue($0.value, settings: settings) != nil
                }
                .min { ($0.value.endedAt ?? 0, $0.key) < ($1.value.endedAt ?? 0, $1.key) }?.key
        }
        if let victim {
            cardBook.update(victim, changes: &changes) { $0.deletionRequestedAt = now }
        }
        let freeingAny = victim != nil || freeing > 0
        var retryAt = now
        cardBook.update(slug, changes: &changes) { session in
            session.waitsForRoom = true
            session.failures += 1
            // Woken by the deletion's answer; the backoff is only for when none comes.
            let backoff = RetryPolicy.delay(afterFailures: session.failures, jitter: jitter)
            retryAt = now + max(problem.retryAfter ?? 0, freeingAny ? max(backoff, 30) : backoff)
            session.retryAt = retryAt
            session.lastProblem =
                "PushWard's account is full (\(problem.summary)): "
                + (victim.map { "deleting the bridge's oldest ended activity, \($0), to make room" }
                    ?? (freeing > 0
                        ? "waiting for the deletion already asked for"
                        : "none of the bridge's activities has ended to make room; the run waits for one"))
            session.lastProblemAt = now
        }
        return .roomNeeded(freeing: victim, retryAt: retryAt)
    }
}
