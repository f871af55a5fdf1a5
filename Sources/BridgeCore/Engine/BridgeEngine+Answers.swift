extension BridgeEngine {
    /// Applies PushWard's answer to a request the engine planned.
    ///
    /// - Parameter jitter: a number in 0…1 from the caller's random source, for the backoff.
    public mutating func handle(
        _ answer: PushWardAnswer, for planned: PlannedRequest, at now: UnixTime, jitter: Double
    ) -> AnswerEffect {
        let slug = planned.request.slug
        // Whatever came back, the card is decided again (now, or when the gate reopens).
        cardBook.markDirty(slug)
        defer { noteSlotAnswer(answer, for: planned, at: now) }
        switch answer {
        case .success:
            dispatch.recordSuccess(changes: &changes)
            acknowledge(planned, at: now)
            return .acknowledged
        case .noAnswer(let reason):
            return transientFailure(slug: slug, detail: reason, retryAfter: nil, at: now, jitter: jitter)
        case .problem(let problem):
            return handle(problem, for: planned, at: now, jitter: jitter)
        }
    }

    private mutating func handle(
        _ problem: PushWardProblem, for planned: PlannedRequest, at now: UnixTime, jitter: Double
    ) -> AnswerEffect {
        let slug = planned.request.slug
        switch problem.status {
        case 429 where problem.code == "quota.exceeded":
            // Without a reset time, an hour: retrying a spent monthly quota sooner is pointless.
            let until = max(problem.resetAt ?? now + 3_600, now + 1)
            dispatch.pauseForQuota(
                until: until, reason: "PushWard quota exhausted: " + problem.summary, changes: &changes)
            return .quotaExhausted(until: until)
        case 429:
            return .rateLimited(until: noteRateLimited(retryAfter: problem.retryAfter, at: now))
        case 401, 403:
            let reason =
                problem.status == 401
                ? "PushWard refused the API key (401): it is wrong or revoked; " + problem.summary
                : "PushWard refused the API key's scope (403): it needs activity:manage; " + problem.summary
            let until = dispatch.refuseKey(reason: reason, at: now, changes: &changes)
            return .unauthorized(status: problem.status, until: until)
        case 404 where planned.kind == .delete:
            // Gone already (PushWard's own deletion after `ended_ttl`, or a person's): done.
            acknowledgeDeletion(planned, deleted: false, at: now)
            return .acknowledged
        case 404 where planned.kind == .correction:
            // The ended card's activity is gone: nothing to correct, and nothing to reuse.
            acknowledgeDeletion(planned, deleted: false, at: now)
            return .acknowledged
        case 404 where planned.request.method == .patch:
            // Deleted behind the bridge's back (or a reused activity PushWard no longer holds):
            // created again, which costs what a create costs; the PATCH that met the 404 did not.
            update(slug) { session in
                session.phase = .needsCreate
                session.acknowledged = nil
                session.serverIdentity = nil
                session.reused = nil
                session.lastProblem = problem.summary
                session.lastProblemAt = now
            }
            return .recreating
        case 500...599, 408:
            return transientFailure(
                slug: slug, detail: problem.summary, retryAfter: problem.retryAfter, at: now, jitter: jitter)
        case 409 where planned.kind == .create:
            return roomRefused(problem, for: planned, at: now, jitter: jitter)
        case 409 where problem.retryAfter != nil:
            // `activity.limit_exceeded` with a retry hint: the per-user cap frees up as others end.
            return transientFailure(
                slug: slug, detail: problem.summary, retryAfter: problem.retryAfter, at: now, jitter: jitter)
        case 422 where planned.kind == .create && planned.request.body["target"] != nil:
            refuseTargets(at: now)
            update(slug) { session in
                session.lastProblem = problem.summary
                session.lastProblemAt = now
            }
            return .targetRefused(detail: problem.summary)
        default:
            // A content field PushWard will not take is left out of the frames that follow.
            let dropped = planned.request.method == .patch ? RefusedField.of(problem, body: planned.request.body) : nil
            update(slug) { session in
                session.rejectedBody = planned.request.body
                if planned.request.method == .patch { session.needsFullFrame = session.phase == .live }
                if let dropped, session.owner == planned.run {
                    session.droppedFields = (session.droppedFields ?? [:]).merging([dropped: problem.summary]) { $1 }
                }
                session.lastProblem = problem.summary
                session.lastProblemAt = now
            }
            return .rejected(detail: problem.summary)
        }
    }

    private mutating func transientFailure(
        slug: String, detail: String, retryAfter: Double?, at now: UnixTime, jitter: Double
    ) -> AnswerEffect {
        let breakerOpened = dispatch.recordFailure(at: now, changes: &changes)
        var retryAt = now
        update(slug) { session in
            session.failures += 1
            retryAt = now + max(retryAfter ?? 0, RetryPolicy.delay(afterFailures: session.failures, jitter: jitter))
            session.retryAt = retryAt
            session.lastProblem = detail
            session.lastProblemAt = now
        }
        return .willRetry(retryAt: retryAt, breakerOpened: breakerOpened)
    }

    private mutating func update(_ slug: String, _ change: (inout ActivitySession) -> Void) {
        cardBook.update(slug, changes: &changes, change)
    }
}
