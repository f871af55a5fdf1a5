/// Keeps every request the bridge makes to PushWard — cards, deletions, widgets, alerts, reads —
/// under `limit` in any `window` (PushWard allows 200 a minute per IP on every endpoint, and other
/// clients of the same key share that minute). Pure: time is an input, nothing is slept on.
///
/// The bridge asks before it plans a request rather than queueing bodies: a request the pacer has
/// no room for is not built; its card stays due, and desired-state reconciliation folds whatever
/// changes while it waits into the one request sent when there is room.
///
/// Room is kept for what matters most. Each `Tier` may fill the window only up to its own share:
/// end frames the whole of it, creates and first frames a little less, and so on down to reads.
/// So a burst of updates can never use the room an end frame needs, and, within one planning
/// turn, the more important requests are admitted first (`BridgeEngine.dueRequests` sorts them).
public struct RequestPacer: Sendable, Equatable {
    /// How important a request is, the most important first.
    public enum Tier: Int, Sendable, CaseIterable, Comparable {
        /// End frames and ends: a finished run must not keep showing as running.
        case ending
        /// Creates, first frames, deletions that free room for a create, alerts.
        case starting
        /// Updates of a run in progress, corrections after the end.
        case updating
        /// Heartbeats and widgets.
        case upkeep
        /// Reads (`GET /auth/me`, `GET /activities`): free of quota, never urgent.
        case reading

        public static func < (lhs: Tier, rhs: Tier) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The label of the tier in metrics.
        public var label: String {
            switch self {
            case .ending: "ending"
            case .starting: "starting"
            case .updating: "updating"
            case .upkeep: "upkeep"
            case .reading: "reading"
            }
        }
    }

    /// `pushward.requests_per_minute` and `pushward.rate_window`.
    public struct Settings: Sendable, Equatable {
        /// Requests allowed in any `window`.
        public var limit: Int
        /// The window's length in seconds: 60, PushWard's minute (tests compress it).
        public var window: Double

        /// 120 of PushWard's 200: the rest of the minute is left to other clients of the key (the
        /// PushWard app, scripts, a second bridge) and to the retries of a bad moment.
        public static let defaultLimit = 120
        /// What PushWard allows one IP a minute; a limit above it would meet `429`s.
        public static let pushwardLimit = 200

        public init(limit: Int = defaultLimit, window: Double = 60) {
            self.limit = limit
            self.window = window
        }
    }

    public let settings: Settings
    /// When each request of the current window was admitted, oldest first.
    private var admitted: [UnixTime] = []
    /// Requests refused room since the last `takeHeld()`, by tier: what `/metrics` counts.
    public private(set) var held: [Tier: Int] = [:]
    /// The most important tier refused room since `beginTurn()`: the dispatcher wakes when it has
    /// room again (`roomAt`).
    public private(set) var waiting: Tier?

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// How much of the window `tier` may fill: all of it for the first tier, a tenth less for
    /// each tier after (at least one request each, however small the limit).
    public func share(of tier: Tier) -> Int {
        let step = max(1, settings.limit / 10)
        return max(1, settings.limit - tier.rawValue * step)
    }

    /// Requests admitted in the window that ends at `now`.
    public func used(at now: UnixTime) -> Int {
        admitted.count - expired(at: now)
    }

    /// Whether a request of `tier` fits now.
    public func hasRoom(for tier: Tier, at now: UnixTime) -> Bool {
        used(at: now) < share(of: tier)
    }

    /// Takes room for one request of `tier` when there is some; otherwise counts it as held (and
    /// `waiting` remembers the tier) and returns false.
    public mutating func admit(_ tier: Tier, at now: UnixTime) -> Bool {
        admitted.removeFirst(expired(at: now))
        guard admitted.count < share(of: tier) else {
            hold(tier)
            return false
        }
        // A clock that stepped back is taken as now: never a request dated before one admitted.
        admitted.append(max(now, admitted.last ?? now))
        return true
    }

    /// Counts a request of `tier` held back for another reason the pacer should wake for (a
    /// request sorted behind one that found no room).
    public mutating func hold(_ tier: Tier) {
        held[tier, default: 0] += 1
        waiting = min(waiting ?? tier, tier)
    }

    /// Notes that requests wait for room for `tier` without counting any as held: a turn that
    /// found no room at all, before deciding what it would have sent.
    public mutating func wait(for tier: Tier) {
        waiting = min(waiting ?? tier, tier)
    }

    /// Starts a planning turn: what waited is asked again in it.
    public mutating func beginTurn() {
        waiting = nil
    }

    /// Hands over the held counts and starts counting afresh.
    public mutating func takeHeld() -> [Tier: Int] {
        defer { held = [:] }
        return held
    }

    /// The earliest time after `now` at which `tier` has room, nil when it has room now.
    public func roomAt(for tier: Tier, after now: UnixTime) -> UnixTime? {
        let live = admitted.dropFirst(expired(at: now))
        let excess = live.count - share(of: tier)
        guard excess >= 0 else { return nil }
        // Room comes when the oldest `excess + 1` admissions leave the window.
        return live[live.startIndex + excess] + settings.window
    }

    /// When the dispatcher should look again for what waited; nil when nothing waits. Room that
    /// came back already (a request answered meanwhile does not free any; only time does) is
    /// looked at a moment later rather than at once, so a turn never spins.
    public func nextWakeup(after now: UnixTime) -> UnixTime? {
        waiting.map { roomAt(for: $0, after: now) ?? now + 0.01 }
    }

    /// How many of the oldest admissions are out of the window that ends at `now`.
    private func expired(at now: UnixTime) -> Int {
        admitted.firstIndex { $0 > now - settings.window } ?? admitted.count
    }
}
