/// The account's room: PushWard keeps at most 50 activities an account, ended ones included until
/// they are deleted, and refuses a create beyond (`409 activity.limit_exceeded`). The bridge keeps
/// its ended activities for the next run of their slug (a PATCH costs one update where a create
/// and a PATCH cost two), and deletes its own oldest ended ones only when the account nears the
/// cap (`AccountRoom`): from 45 activities on, read from `GET /auth/me` and moved by its own
/// creates and deletions, and when a create meets the cap anyway, at once, before creating again.
///
/// It only ever deletes what it created and ended itself: a card of its own (a session, stored in
/// its database) whose `state: ended` PushWard acknowledged. Like every other request the DELETE
/// is desired state: decided here from the stored session, sent once per decision, its answer
/// recorded (a 404 is as good as a 2xx). A crash before the answer is recorded decides the same
/// DELETE again, which deletes nothing twice.
extension BridgeEngine {
    /// When the ended activity on this card is to be deleted; nil when there is nothing to delete
    /// (no deletion asked for, not ended, never acknowledged, deleted already, a run took the card
    /// again, or PushWard refused the DELETE). A deletion is asked for when the account nears its
    /// cap (`tidyAccount`) or a create met it (`roomRefused`); a failed attempt waits for its backoff.
    public static func deletionDue(_ session: ActivitySession, settings: ActivitySettings) -> UnixTime? {
        guard let requested = session.deletionRequestedAt, isDeletable(session) else { return nil }
        return max(requested, session.retryAt ?? requested)
    }

    /// Whether the card's activity is one the bridge may delete: its own, ended (acknowledged),
    /// not deleted yet, and not refused a DELETE before.
    static func isDeletable(_ session: ActivitySession) -> Bool {
        session.phase == .ended && (session.acknowledged != nil || session.serverIdentity != nil)
            && session.deletedAt == nil && session.owner != nil && session.rejectedBody != JSONValue.null
    }

    /// When an ended card's activity ended, for choosing the oldest.
    static func endedAt(_ session: ActivitySession) -> UnixTime {
        session.endedAt ?? session.finalShownAt ?? session.lastPatchAt ?? 0
    }

    /// What `GET /auth/me` says the account holds (`activity_count`), read at `now`; the oldest of
    /// the bridge's ended activities are deleted when that nears the cap (`AccountRoom`).
    public mutating func observeAccount(activityCount: Int, at now: UnixTime) {
        cardBook.room.read(activityCount, at: now)
        tidyAccount(at: now)
    }

    /// Asks for the deletion of the bridge's oldest ended activities while the account holds
    /// `AccountRoom.tidyFrom` or more, counting those already asked for.
    mutating func tidyAccount(at now: UnixTime) {
        guard cardBook.room.excess > 0 else { return }
        let settings = configuration.settings
        let asked = cardBook.slugs(where: {
            $1.deletionRequestedAt != nil && Self.deletionDue($1, settings: settings) != nil
        })
        .count
        let candidates = cardBook.sessions.compactMap { slug, session -> (slug: String, endedAt: UnixTime)? in
            guard session.deletionRequestedAt == nil, Self.isDeletable(session), runBook.contenders(of: slug).isEmpty
            else { return nil }
            return (slug, Self.endedAt(session))
        }
        for slug in cardBook.room.victims(among: candidates, asked: asked) {
            cardBook.update(slug, changes: &changes) { $0.deletionRequestedAt = now }
        }
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

    /// PushWard took the DELETE (`deleted`), or had no such activity: the card holds nothing on
    /// the account any more, and every create that waited for room is tried again now.
    mutating func acknowledgeDeletion(_ planned: PlannedRequest, deleted: Bool, at now: UnixTime) {
        let slug = planned.request.slug
        if deleted { cardBook.room.noteDeleted() }
        if let session = cardBook[slug], session.owner == planned.run, session.phase == .ended,
            session.deletedAt == nil
        {
            cardBook.update(slug, changes: &changes) { session in
                session.deletedAt = now
                session.acknowledged = nil
                session.serverIdentity = nil
                session.deletionRequestedAt = nil
                session.retryAt = nil
                session.failures = 0
            }
        } else if let session = cardBook[slug], session.serverIdentity != nil {
            // A run took the card while the DELETE was out: it creates the activity again rather
            // than meet a 404 on the PATCH it would have reused it with.
            cardBook.update(slug, changes: &changes) { session in
                session.serverIdentity = nil
                if session.sentNothingYet {
                    session.phase = .needsCreate
                    session.reused = nil
                }
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
                    $0.key != slug && $0.value.deletionRequestedAt == nil && Self.isDeletable($0.value)
                        && runBook.contenders(of: $0.key).isEmpty
                }
                .min { (Self.endedAt($0.value), $0.key) < (Self.endedAt($1.value), $1.key) }?.key
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
