/// What to do with an alert after an answer: the whole failure policy of notifications, pure.
///
/// A POST is never known to be unsent once it left, so a lost answer is retried: the body's
/// `collapse_id` makes a second copy replace the first on the phone instead of showing twice
/// (PushWard has no idempotency key; the quota may count both). A refused body is not retried,
/// except without `activity_slug` when the activity is what PushWard did not know.
public enum AlertRetry {
    public enum Step: Sendable, Equatable {
        case sent
        /// Send again at `at` (backoff, `Retry-After`).
        case retry(at: UnixTime)
        /// Send again now without `activity_slug` (422 `notification.activity_not_found`).
        case retryWithoutActivity
        /// Send again now without `target`: the key cannot route (422 to a body with one).
        case retryWithoutTarget
        /// Every alert waits until `until` (the notification quota is spent, or the key may not
        /// send notifications: a person has to act, so the wait is long and said once).
        case pause(until: UnixTime, why: String)
        /// Given up; `why` is recorded with the alert.
        case failed(why: String)
    }

    /// Attempts before a transient failure becomes final: about a day of backoff.
    public static let maximumAttempts = 12
    public static let firstBackoff: Double = 10
    public static let maximumBackoff: Double = 3_600
    /// How long a refused key or permission pauses alerts before trying again.
    public static let refusalPause: Double = 900

    public static func step(
        after answer: NotificationAnswer, attempts: Int, namesActivity: Bool, hasTarget: Bool = false,
        at now: UnixTime
    ) -> Step {
        switch answer {
        case .sent:
            return .sent
        case .noAnswer(let reason):
            return transient(reason, attempts: attempts, retryAfter: nil, at: now)
        case .problem(let problem):
            switch problem.status {
            case 429 where problem.code == "quota.exceeded":
                let until = problem.resetAt ?? now + (problem.retryAfter ?? 3_600)
                return .pause(until: max(until, now + 60), why: "the notification quota is spent (\(problem.summary))")
            case 429:
                return .retry(at: now + max(1, problem.retryAfter ?? 60))
            case 401, 403:
                return .pause(
                    until: now + refusalPause,
                    why: "PushWard refused the key for notifications (\(problem.summary)); it needs "
                        + "notifications: send (and activities: read to link the card)")
            case 422 where problem.code == "notification.activity_not_found" && namesActivity:
                return .retryWithoutActivity
            case 422 where hasTarget:
                return .retryWithoutTarget
            case 400..<500:
                return .failed(why: problem.summary)
            default:
                return transient(problem.summary, attempts: attempts, retryAfter: problem.retryAfter, at: now)
            }
        }
    }

    private static func transient(_ why: String, attempts: Int, retryAfter: Double?, at now: UnixTime) -> Step {
        guard attempts < maximumAttempts else { return .failed(why: "gave up after \(attempts) attempts: \(why)") }
        // The ceiling of the cards' curve (no jitter: alerts are few and do not come back together).
        let backoff = RetryPolicy.delay(afterFailures: attempts, jitter: 1, base: firstBackoff, cap: maximumBackoff)
        return .retry(at: now + max(backoff, retryAfter ?? 0))
    }
}
