import BridgeCore

/// The fake PushWard's Live Activity update quota (spec/PUSHWARD-MORE.md §1 and §7): what it has
/// counted, what `GET /auth/me` says about it, and the `429 quota.exceeded` that refuses an update
/// once it is spent.
///
/// Only Live Activity updates are counted, because they are all the bridge sends; the other
/// counters in `/auth/me` are zero, with the limits of the tier the Live Activity limit implies.
public struct FakeQuota: Sendable, Equatable {
    /// Accepted updates this period: every `201` POST /activities and `200` PATCH counts one
    /// (PushWard charges both). Refused requests (404, 422, 429) and reads cost nothing.
    public var used: Int
    /// The period's allowance: nil is a paid account, unlimited, and `/auth/me` then omits
    /// `live_activity_updates_limit`; 250 is the free tier; zero refuses every update.
    public var limit: Int?
    /// When `used` goes back to zero. Nil until the first request, which sets it to the first of
    /// the next UTC month, as PushWard's free tier does; after a reset it moves to the next month.
    public var resetsAt: UnixTime?
    /// When set, the first refusal moves `resetsAt` to this many seconds after itself (to the
    /// whole second): a test then waits a known time after the refusal however slowly it came,
    /// where a reset fixed in advance could pass before a slowed run (a sanitizer's) was refused.
    public var resetsAfterRefusal: Double?

    public init(used: Int = 0, limit: Int? = nil, resetsAt: UnixTime? = nil) {
        self.used = used
        self.limit = limit
        self.resetsAt = resetsAt
    }

    /// True when an update arriving at `now` must be refused; starts a new period first if the
    /// current one is over.
    public mutating func isSpent(at now: UnixTime) -> Bool {
        rollOver(at: now)
        guard let limit else { return false }
        return used >= limit
    }

    /// Counts one accepted update.
    public mutating func charge(at now: UnixTime) {
        rollOver(at: now)
        used += 1
    }

    /// The reset time in force at `now`, starting a new period if the current one is over.
    public mutating func currentReset(at now: UnixTime) -> UnixTime {
        rollOver(at: now)
        // `rollOver` leaves `resetsAt` set.
        return resetsAt ?? Self.startOfNextMonth(after: now)
    }

    private mutating func rollOver(at now: UnixTime) {
        guard let reset = resetsAt else {
            resetsAt = Self.startOfNextMonth(after: now)
            return
        }
        if now >= reset {
            used = 0
            resetsAt = Self.startOfNextMonth(after: now)
        }
    }

    /// The `GET /auth/me` body at `now`, PushWard's `User` as §1 documents it. A limited account
    /// reads as the free tier (`subscribed: false`, 500 notifications, 50 widget updates, 50
    /// emails); an unlimited one as paid (`subscribed: true`, widget limit omitted, 200 emails,
    /// and 5,000 notifications, our reading of the daily breaker PushWard does not document).
    public mutating func usageDocument(activityCount: Int, at now: UnixTime) -> JSONValue {
        let reset = currentReset(at: now)
        var user: [String: JSONValue] = [
            "id": "fake-user", "nickname": "Fake", "activity_count": .number(Double(activityCount)),
            "subscribed": .bool(limit == nil), "quota_period_month": .number(Double(Self.periodMonth(at: now))),
            "live_activity_updates_used": .number(Double(used)),
            "notifications_used": 0, "notifications_limit": limit == nil ? 5_000 : 500,
            "widget_updates_used": 0, "emails_used": 0, "emails_limit": limit == nil ? 200 : 50,
            "quota_resets_at": .string(Self.rfc3339(reset)),
            "integration_key": [
                "id": "fake-key", "name": "bridge", "is_default": false,
                "permissions": ["activities": "manage", "notifications": "send", "widgets": "write", "emails": "none"],
            ],
        ]
        if let limit {
            user["live_activity_updates_limit"] = .number(Double(limit))
            user["widget_updates_limit"] = 50
        }
        return .object(user)
    }

    /// The problem body of the `429` that refuses an update once the quota is spent (§7), and the
    /// `Retry-After` seconds until `reset_at` (rounded up, never negative).
    public mutating func exceededProblem(at now: UnixTime) -> (body: JSONValue, retryAfter: Int) {
        if let delay = resetsAfterRefusal {
            resetsAt = (now + delay).rounded(.up)
            resetsAfterRefusal = nil
        }
        let reset = currentReset(at: now)
        let body: JSONValue = [
            "type": "https://pushward.app/errors/too-many-requests", "title": "Too Many Requests", "status": 429,
            "detail": "quota exceeded for live_activity_updates", "instance": "/requests/fake",
            "code": "quota.exceeded", "kind": "live_activity_updates", "used": .number(Double(used)),
            "limit": .number(Double(limit ?? used)), "reset_at": .string(Self.rfc3339(reset)),
        ]
        return (body, max(0, Int((reset - now).rounded(.up))))
    }

    /// `2026-09-01T00:00:00Z`; with milliseconds when the time has a fraction (a test's `now + 3`),
    /// so the client reads back the reset to the millisecond rather than up to a second early.
    static func rfc3339(_ time: UnixTime) -> String {
        GitHubTimestamp.format(time, milliseconds: time.rounded(.down) != time)
    }

    /// `YYYYMM` of the UTC month holding `now`.
    static func periodMonth(at now: UnixTime) -> Int {
        let (year, month) = yearAndMonth(at: now)
        return year * 100 + month
    }

    /// 00:00 UTC on the first of the month after the one holding `now`.
    static func startOfNextMonth(after now: UnixTime) -> UnixTime {
        let (year, month) = yearAndMonth(at: now)
        let next = month == 12 ? (year + 1, 1) : (year, month + 1)
        let text = String(next.0).leftPadded(to: 4) + "-" + String(next.1).leftPadded(to: 2) + "-01T00:00:00Z"
        // Built from a valid year and month, so it always parses; `now` is the fallback the type needs.
        return GitHubTimestamp.parse(text) ?? now
    }

    /// The UTC calendar year and month of `now`, read from its RFC 3339 form (no calendar code twice).
    private static func yearAndMonth(at now: UnixTime) -> (Int, Int) {
        let text = Array(GitHubTimestamp.format(now).utf8)
        let year = text[0..<4].reduce(0) { $0 * 10 + Int($1) - 48 }
        let month = text[5..<7].reduce(0) { $0 * 10 + Int($1) - 48 }
        return (year, month)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
