/// What PushWard answered to `GET /auth/me`: the account's usage, a problem, a 2xx whose body
/// could not be read, or no answer at all.
///
/// A value, like `PushWardAnswer`, so the budget planner can decide what an unknown usage means
/// (plan as before, or hold back) without seeing HTTP.
public enum PushWardUsageAnswer: Sendable, Equatable {
    case usage(PushWardUsage)
    /// A non-2xx: 401 `token.invalid`, 429 `rate_limit.exceeded`, 503 `service.unavailable`, …
    case problem(PushWardProblem)
    /// A 2xx whose body is not a usage document (`status` is what was answered).
    case unreadable(status: Int, PushWardUsageError)
    /// Connection refused or reset, timeout, TLS failure, a redirect not followed: nothing usable
    /// came back.
    case noAnswer(reason: String)
}
