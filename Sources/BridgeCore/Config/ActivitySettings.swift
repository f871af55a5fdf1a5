/// How the bridge draws and paces activities: the part of the configuration the pure core uses.
/// Durations are in seconds.
public struct ActivitySettings: Sendable, Equatable {
    /// Which runs share a card.
    public enum Scope: String, Sendable, CaseIterable {
        /// One card per repository (`gh-` + 8 hex of SHA-256 of `owner/repo`): the slug the existing
        /// PushWard GitHub integration uses, so phones already subscribed keep working.
        case repository
        /// One card per workflow of a repository.
        case workflow
    }

    public var scope: Scope = .repository
    /// SF Symbol (or `mdi:` icon) on every card.
    public var icon: String = "arrow.triangle.branch"
    /// Tint steps by kind of job and turn a failed step red.
    public var stepColors: Bool = true
    /// PushWard activity priority, 0–10.
    public var priority: Int = 1
    /// How long PushWard keeps an ended activity on the Lock Screen.
    public var endedTTL: Int = 15 * 60
    /// After this long without an update PushWard ends the activity; the bridge sends a heartbeat
    /// at half of it while a run is still going.
    public var staleTTL: Int = 30 * 60
    /// Between a run's completion and its end frame: late job deliveries still land in it.
    public var endDelay: Double = 5
    /// How long the end frame shows (as `ongoing`) before the activity is ended.
    public var endDisplayTime: Double = 4
    /// At most one PATCH per slug in this interval (end frames excepted): ten events in a burst
    /// become one update.
    public var minUpdateInterval: Double = 1
    /// When every job finished but the run's `completed` delivery never arrives, the run is taken
    /// as finished after this long with nothing new.
    public var completionGrace: Double = 120

    public init() {}
}
