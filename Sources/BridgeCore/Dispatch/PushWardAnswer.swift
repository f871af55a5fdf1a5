/// What PushWard answered to one request, as the core needs it: a 2xx, a problem (RFC 9457 or
/// the legacy `{"error": …}`), or no answer at all.
public enum PushWardAnswer: Sendable, Equatable {
    /// A 2xx; `state` is the activity's state as the answer's body gives it (`ongoing`, `ended`,
    /// `preempted`), nil when it did not say (a POST, a widget, a body not read).
    case success(status: Int, state: String? = nil)
    case problem(PushWardProblem)
    /// Connection refused or reset, timeout, TLS failure: nothing came back.
    case noAnswer(reason: String)
}

/// A non-2xx answer with what its body said.
public struct PushWardProblem: Sendable, Equatable, Codable {
    public var status: Int
    /// The stable machine code (`activity.content_invalid`, `quota.exceeded`, …); nil when the body
    /// had none.
    public var code: String?
    public var detail: String?
    /// Seconds to wait, from `Retry-After` or `retry_after_ms`.
    public var retryAfter: Double?
    /// When a monthly quota comes back (`reset_at`), for `quota.exceeded`.
    public var resetAt: UnixTime?
    /// For `quota.exceeded`: which counter is spent (`live_activity_updates`, `notifications`,
    /// `widget_updates`, `emails`); nil for any other problem, or when the body did not say.
    public var quotaKind: String?
    /// For `quota.exceeded`: the counter's `used` and `limit` when refused, so a refusal updates
    /// what the bridge knows of the budget without asking `GET /auth/me`; nil when not given.
    public var quotaUsed: Int?
    public var quotaLimit: Int?
    /// The fields a `422` names, from the problem's `errors[].location` (`body.content.state`);
    /// nil when it gave none (`RefusedField`).
    public var fieldLocations: [String]?

    public init(
        status: Int, code: String? = nil, detail: String? = nil, retryAfter: Double? = nil, resetAt: UnixTime? = nil,
        quotaKind: String? = nil, quotaUsed: Int? = nil, quotaLimit: Int? = nil
    ) {
        self.status = status
        self.code = code
        self.detail = detail
        self.retryAfter = retryAfter
        self.resetAt = resetAt
        self.quotaKind = quotaKind
        self.quotaUsed = quotaUsed
        self.quotaLimit = quotaLimit
    }

    /// `422 activity.content_invalid: step_rows[2] must be 1–10`.
    public var summary: String {
        var text = String(status)
        if let code { text += " " + code }
        if let detail { text += ": " + detail }
        return text
    }
}
