import Foundation

/// What PushWard says the API key's account has spent this quota period (`GET /auth/me`), as the
/// push-budget planner needs it: how many Live Activity updates are used and allowed, and when the
/// count starts again.
///
/// Reading it costs no quota, so the bridge can ask whenever it plans. Only the counters the
/// bridge can spend are kept; the rest of PushWard's `User` document (nickname, integration key,
/// emails, …) is ignored on purpose, so a server that adds fields never breaks the decode.
public struct PushWardUsage: Sendable, Equatable {
    /// Live Activity updates charged this period: every accepted `POST /activities` and every
    /// `PATCH /activities/{slug}` counts one, whatever the number of devices.
    public var liveActivityUpdatesUsed: Int
    /// The period's allowance (250 on the free tier). Nil means unlimited: PushWard omits the
    /// member for a paid account. Zero means nothing may be sent.
    public var liveActivityUpdatesLimit: Int?
    /// Widget updates charged this period (every widget PATCH, unchanged heartbeats included);
    /// zero when the answer leaves the member out.
    public var widgetUpdatesUsed: Int
    /// Nil means unlimited (the member is omitted), as for Live Activity updates.
    public var widgetUpdatesLimit: Int?
    /// Notifications charged: this month on the free tier; on a paid account PushWard's own
    /// reading is a daily counter (see `quotaResetsAt`). Zero when the answer leaves it out.
    public var notificationsUsed: Int
    /// Nil means no limit was given. On a paid account the value is probably the 5,000-a-day
    /// breaker rather than a monthly cap (PushWard does not say).
    public var notificationsLimit: Int?
    /// When the counters start again: the first of next month, 00:00 UTC, on the free tier; the
    /// next UTC midnight on a paid account (that one is the notification counter's). Nil when the
    /// answer did not say.
    public var quotaResetsAt: UnixTime?
    /// The period the counters belong to, as `YYYYMM` in UTC (`202608`); nil when not given.
    public var quotaPeriodMonth: Int?
    /// Whether the account has an active App Store subscription, the only hint of its tier that
    /// PushWard gives an integration key; nil when not given.
    public var subscribed: Bool?
    /// The activities the account holds now, ended ones included (`activity_count`; PushWard keeps
    /// 50): what the bridge tidies its ended activities by (`AccountRoom`). Nil when not given.
    public var activityCount: Int?

    public init(
        liveActivityUpdatesUsed: Int, liveActivityUpdatesLimit: Int?, widgetUpdatesUsed: Int = 0,
        widgetUpdatesLimit: Int? = nil, notificationsUsed: Int = 0, notificationsLimit: Int? = nil,
        quotaResetsAt: UnixTime? = nil, quotaPeriodMonth: Int? = nil, subscribed: Bool? = nil,
        activityCount: Int? = nil
    ) {
        self.activityCount = activityCount
        self.liveActivityUpdatesUsed = liveActivityUpdatesUsed
        self.liveActivityUpdatesLimit = liveActivityUpdatesLimit
        self.widgetUpdatesUsed = widgetUpdatesUsed
        self.widgetUpdatesLimit = widgetUpdatesLimit
        self.notificationsUsed = notificationsUsed
        self.notificationsLimit = notificationsLimit
        self.quotaResetsAt = quotaResetsAt
        self.quotaPeriodMonth = quotaPeriodMonth
        self.subscribed = subscribed
    }

    /// An account without limits that has spent nothing: what dry-run mode reports, since nothing
    /// it "sends" is counted anywhere.
    public static let unlimited = PushWardUsage(liveActivityUpdatesUsed: 0, liveActivityUpdatesLimit: nil)

    /// Live Activity updates still allowed this period: nil when unlimited, zero when spent (never
    /// negative, should `used` ever pass `limit`).
    public var liveActivityUpdatesRemaining: Int? {
        liveActivityUpdatesLimit.map { max(0, $0 - liveActivityUpdatesUsed) }
    }

    /// Reads a `GET /auth/me` body (PushWard's `User` schema).
    ///
    /// Tolerant where PushWard may grow: unknown members are ignored, and a limit that is absent
    /// or `null` means unlimited. Strict where a wrong value would mislead the planner: a count
    /// or limit that is not a whole number from zero up, a reset time that is not RFC 3339, or a
    /// period that is not `YYYYMM` fails with the field named. `live_activity_updates_used` is the
    /// one required member: without it the body is not a usage answer at all.
    public static func decode(_ body: Data) -> Result<PushWardUsage, PushWardUsageError> {
        let document: JSONValue
        do {
            document = try JSONValue(parsing: body)
        } catch {
            return .failure(.invalidJSON(String(decoding: body.prefix(80), as: UTF8.self)))
        }
        guard let object = document.objectValue else { return .failure(.notAnObject) }
        return Result { () throws(PushWardUsageError) in try read(object) }
    }

    private static func read(_ object: [String: JSONValue]) throws(PushWardUsageError) -> PushWardUsage {
        guard let used = try count(object, "live_activity_updates_used") else {
            throw .missingField("live_activity_updates_used")
        }
        var usage = PushWardUsage(
            liveActivityUpdatesUsed: used, liveActivityUpdatesLimit: try count(object, "live_activity_updates_limit"))
        usage.widgetUpdatesUsed = try count(object, "widget_updates_used") ?? 0
        usage.widgetUpdatesLimit = try count(object, "widget_updates_limit")
        usage.notificationsUsed = try count(object, "notifications_used") ?? 0
        usage.notificationsLimit = try count(object, "notifications_limit")
        usage.quotaResetsAt = try timestamp(object, "quota_resets_at")
        usage.quotaPeriodMonth = try periodMonth(object, "quota_period_month")
        usage.subscribed = try flag(object, "subscribed")
        usage.activityCount = try count(object, "activity_count")
        return usage
    }

    /// A whole number from zero up; nil when absent or `null`.
    private static func count(_ object: [String: JSONValue], _ key: String) throws(PushWardUsageError) -> Int? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let number = value.intValue, number >= 0 else {
            throw .invalidField(key, expected: "a whole number from 0 up")
        }
        return number
    }

    private static func timestamp(_ object: [String: JSONValue], _ key: String) throws(PushWardUsageError) -> UnixTime?
    {
        guard let value = object[key], !value.isNull else { return nil }
        guard let text = value.stringValue, let time = GitHubTimestamp.parse(text) else {
            throw .invalidField(key, expected: "an RFC 3339 timestamp")
        }
        return time
    }

    /// `YYYYMM` with a month from 01 to 12.
    private static func periodMonth(_ object: [String: JSONValue], _ key: String) throws(PushWardUsageError) -> Int? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let number = value.intValue, (100_001...999_912).contains(number), (1...12).contains(number % 100) else {
            throw .invalidField(key, expected: "a month as YYYYMM")
        }
        return number
    }

    private static func flag(_ object: [String: JSONValue], _ key: String) throws(PushWardUsageError) -> Bool? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let flag = value.boolValue else { throw .invalidField(key, expected: "true or false") }
        return flag
    }
}
