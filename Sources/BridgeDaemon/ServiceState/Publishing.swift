import BridgeCore

/// What the service last said of its engine: when the snapshot's counts (a pass over every run
/// held) were last taken and whether a later count is already scheduled, and the budget level last
/// written to the log. Counting after every group and answer cost a tenth to a fifth of
/// `make bench`'s throughput (thousands of runs held, counted hundreds of times a second), so the
/// counts go at most every `interval`, and one count waits for the end of it so the last change is
/// never left out.
struct Publishing: Sendable, Equatable {
    /// How stale the counts in `/metrics` may be.
    static let interval: Duration = .milliseconds(250)

    /// What a publication at some instant does with the counts.
    enum Count: Sendable, Equatable {
        /// Counted now.
        case now
        /// Not now; one count is to be scheduled for the end of the interval.
        case later
        /// Not now; a count is scheduled already.
        case scheduled
    }

    private var countedAt: ContinuousClock.Instant?
    private var countScheduled = false
    private var levelLogged: Fidelity?

    /// Whether a publication at `now` counts, and records what it decided.
    mutating func count(at now: ContinuousClock.Instant) -> Count {
        if countedAt.map({ now - $0 >= Self.interval }) ?? true {
            countedAt = now
            return .now
        }
        guard !countScheduled else { return .scheduled }
        countScheduled = true
        return .later
    }

    /// The scheduled count is due: the next publication counts.
    mutating func scheduledCountDue() {
        countScheduled = false
        countedAt = nil
    }

    /// The level the planner has in force now; the level last logged when it differs (to be said
    /// once), nil when it was said already.
    mutating func levelChanged(to level: Fidelity?) -> Fidelity?? {
        guard level != levelLogged else { return nil }
        defer { levelLogged = level }
        return .some(levelLogged)
    }
}
