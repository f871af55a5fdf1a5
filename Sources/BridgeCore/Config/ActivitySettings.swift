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

    /// Which PushWard template a card uses.
    public enum Template: String, Sendable, CaseIterable {
        /// A segment per job group, matrix jobs stacked, sized by history (the default).
        case steps
        /// The whole run as one bar, with an ETA for the whole run when history gives one.
        case generic
    }

    public var scope: Scope = .repository
    /// `activity.template`.
    public var template: Template = .steps
    /// SF Symbol (or `mdi:` icon) on every card.
    public var icon: String = "arrow.triangle.branch"
    /// Tint steps by kind of job and turn a failed step red.
    public var stepColors: Bool = true
    /// PushWard activity priority, 0–10: the priority of a run in the lowest class; the classes
    /// above it (`SlotRank`) and the summary card are sent one step higher each.
    public var priority: Int = 1
    /// Ongoing cards per person (`pushward.slots_per_person`, 1–5): PushWard ends the oldest
    /// lowest-priority card when a sixth goes ongoing (iOS's per-app limit), so the bridge
    /// chooses which runs hold the five itself (`SlotPlanner`); with more runs than slots one of
    /// them is the summary card. Lower it to leave room for other integrations' cards.
    public var slotsPerPerson: Int = 5
    /// How long an ended card stays on the Lock Screen (`pushward.ended_ttl`). Sent as PushWard's
    /// `dismissal_ttl` (at most its 4 hours, `dismissalTTL`); the activity itself is kept for the
    /// next run of its slug (`retainedEndedTTL`) and deleted by the bridge only when the account
    /// nears PushWard's 50 (`AccountRoom`).
    public var endedTTL: Int = 15 * 60

    /// PushWard's longest `dismissal_ttl`: iOS keeps an ended Live Activity on the Lock Screen 4 hours at most.
    public static let longestDismissal = 14_400
    /// The `dismissal_ttl` sent: `endedTTL`, within what PushWard takes.
    public var dismissalTTL: Int { min(max(0, endedTTL), Self.longestDismissal) }
    /// The `ended_ttl` sent: PushWard's longest (30 days), so PushWard does not delete an ended
    /// activity the next run of its slug will reuse without paying for a create. The Lock Screen
    /// follows `dismissal_ttl` instead.
    public static let retainedEndedTTL = 2_592_000
    /// How long after its end an activity is reused: a day short of PushWard's deletion, so a
    /// clock apart or a late delivery does not meet a 404 (which would only cost the create).
    public static let reuseWithin = Double(retainedEndedTTL - 86_400)
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
    /// How long a job stays queued before its card says it waits for a runner, with its labels
    /// (`activity.runner_wait`): long enough that a hosted runner's usual pickup never shows,
    /// short enough that a label nobody serves is said long before GitHub's 24-hour cancel.
    public var runnerWait: Double = 120
    /// How much of a run a card shows (`pushward.fidelity`); see `Fidelity`.
    public var fidelity: Fidelity = .auto
    /// How long a change that is neither a step change, a first failure nor an end waits to merge
    /// with what follows (`pushward.coalesce`). 10 s: GitHub delivers a job's completion and the
    /// next job's start, or the shards of a matrix finishing, within a few seconds of each other,
    /// and a card 10 s behind on a count is not something a person glancing at it notices (the
    /// live window animates on the phone meanwhile). 0 sends every change as it comes.
    public var coalesce: Double = 10
    /// At most this many requests (POST and PATCH) per card in any rolling hour
    /// (`pushward.max_updates_per_hour`). iOS delivers about 15 updates an hour to a Live
    /// Activity whose user has not turned on frequent updates and silently drops the rest; two of
    /// them are always kept for the end frame and the end, so the end is never the one dropped.
    public var maxUpdatesPerHour: Int = 15

    /// How long a step change waits for what usually follows it within a moment (the next job's
    /// start after the previous one's completion), so both go as one update: the shorter of 3 s
    /// and `coalesce`.
    public var settle: Double { min(3, coalesce) }
    /// The longest a change inside a step is held while more keep coming, and the shortest gap
    /// between the card's last update and one that only moves a count: six coalesce windows (a
    /// minute by default), so a long fan-out still moves on the phone, about once a minute.
    public var maxHold: Double { 6 * coalesce }
    /// These settings pushing every visible change the moment it is known: level `full`, no
    /// coalescing (so no settle window either) and an hourly cap no run reaches. The yardstick
    /// `explain` measures the configured economy against, and what tests of a card's content use.
    public func pushingEveryChange() -> ActivitySettings {
        var settings = self
        settings.fidelity = .full
        settings.coalesce = 0
        settings.maxUpdatesPerHour = 3_600
        return settings
    }

    /// The default settings pushing every change; see `pushingEveryChange()`.
    public static var pushingEveryChange: ActivitySettings { ActivitySettings().pushingEveryChange() }

    /// Requests of the hourly cap kept for the end frame and the end.
    public static let reservedForEnd = 2

    public init() {}
}
