import BridgeCore
import BridgeStore
import Foundation

/// The cards' requests to PushWard on the service's side: which have a request out (nothing more
/// is planned for a card until its answer is back), what each answer did to the card, recorded in
/// `pushes` in the turn that applies it, and the one log line each answer deserves.
struct RequestDesk: Sendable {
    /// The cards and widgets with a request out.
    var inFlight = InFlight()
    /// Signalled when PushWard said the quota is spent or the account is full: the usage (and the
    /// account's activity count) is read again at once.
    let usageRefresh: WakeupSignal

    /// Applies PushWard's answer to `planned` in the turn: a 2xx moves the card on; anything else
    /// leaves the acknowledged content as it was, so the next attempt is computed against what
    /// PushWard holds. The request is recorded with what became of it, and the card's claim (several
    /// instances, `claimEpoch`) released.
    func record(
        _ planned: PlannedRequest, answer: PushWardAnswer, dryRun: Bool, claimEpoch: Int64?,
        in turn: inout ServiceTurn
    ) throws {
        let now = turn.now
        let status: Int?
        let detail: String?
        switch answer {
        case .success(let code, _):
            status = code
            detail = nil
        case .problem(let problem):
            status = problem.status
            detail = problem.summary
        case .noAnswer(let reason):
            status = nil
            detail = reason
        }
        turn.metrics.add(
            "pushward_requests_total",
            labels: ["kind": planned.kind.rawValue, "status": status.map(String.init) ?? "none"])
        let quotaWasExhausted = turn.engine.gate.quotaExhausted(at: now)
        let targetsWereRefused = turn.engine.gate.targetsRefusedAt != nil
        let effect = turn.engine.handle(answer, for: planned, at: now, jitter: Double.random(in: 0...1))
        // Spent, or the account is full: the usage is read again (the oldest ended activities are
        // then tidied).
        switch effect {
        case .quotaExhausted, .roomNeeded: usageRefresh.signal()
        case .willRetry: turn.metrics.add("pushward_retries_total")
        default: break
        }
        Self.report(
            effect, planned: planned, quotaWasExhausted: quotaWasExhausted, targetsWereRefused: targetsWereRefused,
            in: turn)
        turn.wakesDispatcher = true
        if let claimEpoch { try turn.database.releaseClaim(planned.request.slug, epoch: claimEpoch) }
        try turn.database.insert(
            RequestRecord(
                slug: planned.request.slug, run: planned.run, kind: planned.kind.rawValue,
                method: planned.request.method.rawValue, path: planned.request.path,
                body: planned.request.body.canonicalString, sentAt: now, status: status,
                outcome: dryRun ? "dry-run" : Self.outcome(effect), detail: detail))
    }

    static func outcome(_ effect: AnswerEffect) -> String {
        switch effect {
        case .acknowledged: "acknowledged"
        case .willRetry: "retry"
        case .recreating: "recreate"
        case .rejected: "rejected"
        case .rateLimited: "rate_limited"
        case .quotaExhausted: "quota_exhausted"
        case .unauthorized: "unauthorized"
        case .targetRefused: "target_refused"
        case .roomNeeded: "room_needed"
        }
    }

    /// One log line per decision, at the level a person should see it.
    static func report(
        _ effect: AnswerEffect, planned: PlannedRequest, quotaWasExhausted: Bool, targetsWereRefused: Bool,
        in turn: borrowing ServiceTurn
    ) {
        let logger = turn.log
        var metadata: [String: JSONValue] = [
            "activity.slug": .string(planned.request.slug), "push.kind": .string(planned.kind.rawValue),
            "run.id": .number(Double(planned.run.runID)), "run.attempt": .number(Double(planned.run.attempt)),
            "github.repository": .string(planned.run.repository),
        ]
        switch effect {
        case .acknowledged:
            logger.debug("PushWard acknowledged a request", metadata)
        case .willRetry(let retryAt, let breakerOpened):
            metadata["push.retry_at"] = .number(retryAt)
            logger.info("PushWard did not take a request; the card retries with its latest state", metadata)
            if breakerOpened {
                logger.warning("PushWard keeps failing: pausing all requests, then probing with one", metadata)
            }
        case .recreating:
            logger.warning("the activity was deleted on PushWard; creating it again and sending it whole", metadata)
        case .rejected(let detail):
            metadata["push.problem"] = .string(detail)
            logger.error("PushWard rejected a request; it is not sent again (a bug in the bridge)", metadata)
        case .rateLimited(let until):
            metadata["push.resume_at"] = .number(until)
            logger.warning("PushWard rate limit reached; every card waits", metadata)
        case .quotaExhausted(let until):
            metadata["push.resume_at"] = .number(until)
            if !quotaWasExhausted {
                logger.error(
                    "PushWard quota exhausted: nothing is sent until it resets; cards keep computing", metadata)
            }
        case .unauthorized(let status, let until):
            metadata["push.resume_at"] = .number(until)
            metadata["push.status"] = .number(Double(status))
            if status == 401 {
                logger.error(
                    "PushWard refused the API key (401): it is wrong or revoked; fix pushward.api_key", metadata)
            } else {
                logger.error("PushWard refused the API key (403): it lacks the activity:manage scope", metadata)
            }
        case .targetRefused(let detail):
            metadata["push.problem"] = .string(detail)
            if !targetsWereRefused { turn.sayTargetsRefused(metadata) }
        case .roomNeeded(let freeing, let retryAt):
            metadata["push.retry_at"] = .number(retryAt)
            if let freeing {
                metadata["activity.freeing"] = .string(freeing)
                logger.notice(
                    "PushWard's account holds 50 activities: deleting the bridge's oldest ended one, then creating",
                    metadata)
            } else {
                logger.warning(
                    "PushWard's account holds 50 activities and none of the bridge's can be deleted yet: the run waits",
                    metadata)
            }
        }
    }
}
