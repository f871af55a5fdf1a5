import BridgeCore

/// What the service last said of its engine: when the snapshot's counts (a pass over every run
/// held) were last taken and whether a later count is already scheduled, and the budget level last
/// written to the log. Counting after every group and answer cost a tenth to a fifth of
/// `make bench`'s throughput (thousands of runs held, counted hundreds of times a second), so the
/// counts go at most every `interval`, and one count waits for the end of it so the last change is
/// never left out.
struct Publishing: Sendable {
    /// How stale the counts in `/metrics` may be.
    static let interval: Duration = .milliseconds(250)

    /// Where the snapshot goes, for `ServiceStatus` to read off the service's queue.
    let board: ServiceSnapshot.Board

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

    init(board: ServiceSnapshot.Board) {
        self.board = board
    }

    /// What `GET /auth/me` last said of notifications, shown on the status page.
    var notifications: (used: Int, limit: Int?)? {
        get { board.snapshot.notifications }
        nonmutating set { board.snapshot.notifications = newValue }
    }

    /// Publishes what the gauges and the status page read of `engine`, after a turn changed it.
    /// Sizes, the gate and the budget go at once; the two counts that take a pass over every run
    /// held go at most every `interval`. `.later`: the caller publishes again at the end of the
    /// interval, so the last change is never left out.
    mutating func publish(_ engine: BridgeEngine, inFlight: Int) -> Count {
        var snapshot = board.snapshot
        snapshot.update(from: engine, inFlight: inFlight)
        let counted = count(at: ContinuousClock.now)
        if counted == .now { snapshot.countLive(in: engine) }
        board.snapshot = snapshot
        return counted
    }

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
