import BridgeCore

/// The limits PushWard documents (`PUSHWARD-MORE.md` §7, the OpenAPI document), as the fake
/// enforces them. Every test meets the documented values unless it says otherwise, so a bridge
/// that passes here stays inside what the real server allows; a test may compress time (a
/// shorter rate window) or slow auto-deletion, never lift a limit to make the bridge pass.
public struct FakeLimits: Sendable, Equatable {
    /// How fast ended activities are deleted after their `ended_ttl`.
    public enum AutoDeletion: Sendable, Equatable {
        /// `ended_ttl` seconds after the end (30 days when unset), as PushWard does.
        case asDocumented
        /// `factor` times later than documented: "auto-deletion too slow to help".
        case slowed(factor: Double)
        /// Never: only `DELETE /activities/{slug}` removes an activity.
        case off
    }

    /// Ongoing Live Activities one person may hold (iOS's per-app limit): the next one to go
    /// `ongoing` evicts the lowest-`priority`, then oldest, ongoing one (state `preempted`).
    public var ongoingPerPerson: Int
    /// Activities one account may hold, ended ones included until deleted: the next create is
    /// `409 activity.limit_exceeded`.
    public var activitiesPerAccount: Int
    /// Widgets one account may hold: the next create is `429 widget.limit_exceeded`.
    public var widgetsPerAccount: Int
    /// Requests one client address may make in `rateWindow` seconds, every endpoint counted:
    /// beyond it `429 rate_limit.exceeded` with `Retry-After: 60`.
    public var requestsPerWindow: Int
    /// The rate limit's window in seconds: 60 as documented; a test may shorten it to run a
    /// time-compressed minute (the bridge's pacer scaled the same way).
    public var rateWindow: Double
    public var autoDeletion: AutoDeletion

    public init(
        ongoingPerPerson: Int = 5, activitiesPerAccount: Int = 50, widgetsPerAccount: Int = 50,
        requestsPerWindow: Int = 200, rateWindow: Double = 60, autoDeletion: AutoDeletion = .asDocumented
    ) {
        self.ongoingPerPerson = ongoingPerPerson
        self.activitiesPerAccount = activitiesPerAccount
        self.widgetsPerAccount = widgetsPerAccount
        self.requestsPerWindow = requestsPerWindow
        self.rateWindow = rateWindow
        self.autoDeletion = autoDeletion
    }

    /// What PushWard documents.
    public static let documented = FakeLimits()

    /// How long an ended activity without `ended_ttl` is kept: "ended rows deleted after 30 days".
    public static let defaultEndedTTL = 2_592_000

    /// When an activity that ended at `end` with `endedTTL` (nil: the default) is deleted, or nil
    /// when auto-deletion is off.
    public func deletion(endedAt end: UnixTime, endedTTL: Int?) -> UnixTime? {
        let delay = Double(endedTTL ?? Self.defaultEndedTTL)
        switch autoDeletion {
        case .asDocumented: return end + delay
        case .slowed(let factor): return end + delay * factor
        case .off: return nil
        }
    }
}
