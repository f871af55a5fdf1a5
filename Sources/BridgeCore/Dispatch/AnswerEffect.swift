/// What a PushWard answer did, for the log line and the metrics: each is said once, where the
/// decision is made.
public enum AnswerEffect: Sendable, Equatable {
    /// 2xx: the acknowledged content moved on.
    case acknowledged
    /// No answer or a 5xx: the card tries again at `retryAt` (with the latest state, not a backlog);
    /// `breakerOpened` when this failure opened the circuit breaker.
    case willRetry(retryAt: UnixTime, breakerOpened: Bool)
    /// 404 on a PATCH: the activity was deleted on the server; it is created again and sent whole.
    case recreating
    /// 422 or another 4xx: the body is never sent again; the problem is kept on the card.
    case rejected(detail: String)
    /// 429 `rate_limit.exceeded`: every card waits until then.
    case rateLimited(until: UnixTime)
    /// 429 `quota.exceeded`: nothing is sent until the quota resets; cards keep computing.
    case quotaExhausted(until: UnixTime)
    /// 401/403: the key is wrong or lacks scope; retried then.
    case unauthorized(status: Int, until: UnixTime)
    /// `409` to a create: the account holds 50 activities. `freeing` is the bridge's own ended
    /// activity it deletes to make room (nil: none to delete, or one is being deleted already);
    /// the create goes again once room is made, or at `retryAt`.
    case roomNeeded(freeing: String?, retryAt: UnixTime)
    /// 422 to a create carrying `target`: the key cannot route (a personal key). Targets are off
    /// from now on and the activity is created again at once without one.
    case targetRefused(detail: String)
}
