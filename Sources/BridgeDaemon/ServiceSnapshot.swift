import BridgeCore
import BridgeStore
import Foundation

/// What `/metrics` and the status page read of the service: counts of what the core holds, the
/// dispatch gate and the budget, as of the service's last step (a group commit, a dispatch turn,
/// an answer, a budget read).
///
/// Published by `BridgeService` into a `Board` after each step, and read from the admin listener's
/// threads without entering the service's queue: a scrape must not wait behind a group commit, a
/// retention pass or a store stuck on another process's lock, which is exactly when an operator
/// looks at the metrics.
public struct ServiceSnapshot: Sendable {
    public typealias Gauge = (name: String, help: String, labels: [String: String], value: Double)

    public var runsHeld = 0
    public var activitiesHeld = 0
    public var historyWorkflowsHeld = 0
    public var runsInProgress = 0
    public var activitiesLive = 0
    public var requestsInFlight = 0
    public var gate = DispatchGate()
    public var budget: PushBudget?
    public var levelInForce: Fidelity?
    public var arrivals = RunArrivals()
    /// Notifications PushWard counted this period and the allowance (nil: unlimited), from the
    /// last `GET /auth/me`; nil until one was read.
    public var notifications: (used: Int, limit: Int?)?
    /// The request pacer as of the last step; nil when the engine has none.
    public var pacer: RequestPacer?

    /// The snapshot of `engine`, with `inFlight` requests out.
    init(engine: BridgeEngine, inFlight: Int) {
        update(from: engine, inFlight: inFlight)
        countLive(in: engine)
    }

    /// Takes what costs nothing to read: sizes, the gate, the budget.
    mutating func update(from engine: BridgeEngine, inFlight: Int) {
        runsHeld = engine.runs.count
        activitiesHeld = engine.sessions.count
        historyWorkflowsHeld = engine.history.count
        requestsInFlight = inFlight
        gate = engine.gate
        budget = engine.budget
        levelInForce = engine.levelInForce
        arrivals = engine.arrivals
        pacer = engine.pacer
    }

    /// What the status page says while the pacer holds requests back: how much of the window is
    /// used, and that what waits goes out (end frames first) as room comes. Nil while nothing waits.
    func pacerNotice(at now: UnixTime) -> String? {
        guard let pacer, pacer.waiting != nil else { return nil }
        let window = pacer.settings.window == 60 ? "minute" : "\(Int(pacer.settings.window)) s"
        return "Pacing requests to PushWard: \(pacer.used(at: now)) of \(pacer.settings.limit) in the last \(window) "
            + "(pushward.requests_per_minute). Changes wait for room and go out merged, end frames first."
    }

    /// What the pacer admitted in the window ending now, and its limit: how close the bridge is
    /// to PushWard's per-minute limit.
    func pacerGauges(at now: UnixTime) -> [Gauge] {
        guard let pacer else { return [] }
        return [
            (
                "pushward_pacer_window_requests",
                "Requests to PushWard admitted in the pacer's window (pushward.rate_window) ending now.", [:],
                Double(pacer.used(at: now))
            ),
            (
                "pushward_pacer_limit", "Requests to PushWard the pacer admits in a window (requests_per_minute).",
                [:], Double(pacer.settings.limit)
            ),
        ]
    }

    /// Counts the runs not finished and the cards not ended: a pass over everything held, which
    /// the service does at most a few times a second (`BridgeService.publishSnapshot`).
    mutating func countLive(in engine: BridgeEngine) {
        runsInProgress = engine.runs.values.reduce(0) { $0 + ($1.completion == nil ? 1 : 0) }
        activitiesLive = engine.sessions.values.reduce(0) { $0 + ($1.phase != .ended ? 1 : 0) }
    }

    /// The gauges at scrape time `now`, with what is read then rather than published: deliveries
    /// waiting for a commit, the database's size, the checkpointer's progress.
    func gauges(
        at now: UnixTime, deliveriesWaiting: Int, databaseBytes: Double, wal: WALCheckpointer.Snapshot?
    ) -> [Gauge] {
        let breaker = gate.breaker.state
        let held: [Gauge] = [
            (
                "runs_held", "Runs the core holds in memory: in flight, or finished within the grace.", [:],
                Double(runsHeld)
            ),
            ("activities_held", "Cards the core holds in memory.", [:], Double(activitiesHeld)),
            (
                "history_workflows_held", "Workflows whose finished runs the history cache holds.", [:],
                Double(historyWorkflowsHeld)
            ),
            (
                "sqlite_memory_bytes", "Heap bytes SQLite holds (page caches, statements).", [:],
                Double(SQLiteConnection.processMemoryUsed)
            ),
        ]
        return held + [
            ("runs_in_progress", "Runs not finished yet.", [:], Double(runsInProgress)),
            ("activities_live", "Cards not ended on PushWard.", [:], Double(activitiesLive)),
            ("requests_in_flight", "Requests to PushWard awaiting an answer.", [:], Double(requestsInFlight)),
            (
                "circuit_breaker_open", "1 while the circuit breaker holds requests back.", [:],
                breaker == .closed ? 0 : 1
            ),
            ("quota_exhausted", "1 while PushWard's quota is spent.", [:], gate.quotaExhausted(at: now) ? 1 : 0),
            (
                "dispatch_blocked", "1 while any gate (quota, rate limit, refused key, breaker) holds requests.", [:],
                gate.blockedUntil(at: now) == nil ? 0 : 1
            ),
            (
                "routing_targets_refused",
                "1 once PushWard refused a routing target (a personal key): cards go to everyone.",
                [:], gate.targetsRefusedAt == nil ? 0 : 1
            ),
            ("database_bytes", "Size of the database file and its WAL.", [:], databaseBytes),
            (
                "deliveries_waiting", "Deliveries received and not answered yet (queued or being committed).", [:],
                Double(deliveriesWaiting)
            ),
        ]
            + budgetGauges(at: now) + pacerGauges(at: now)
            // Only when a checkpointer runs: a zero would claim one keeps up.
            + (wal.map { snapshot in
                [
                    (
                        "wal_frames_not_checkpointed",
                        "WAL frames not yet copied into the database file by the checkpointer.", [:],
                        Double(max(0, snapshot.walFrames - snapshot.walFramesCheckpointed))
                    ),
                    ("wal_restarts_total", "", [:], Double(snapshot.restarts)),
                    ("wal_handovers_total", "", [:], Double(snapshot.handovers)),
                    ("wal_database_syncs_total", "", [:], Double(snapshot.databaseSyncs)),
                ]
            } ?? [])
    }

    /// The push budget's gauges: what PushWard counted, the allowance, the level chosen last, and
    /// what the planner looks ahead to: how long until the count starts over and how many runs it
    /// expects by then, so a dashboard shows why the level moved before it moves.
    func budgetGauges(at now: UnixTime) -> [Gauge] {
        let used: Double = budget.map { Double($0.used) } ?? -1
        let limit: Double = budget?.limit.map(Double.init) ?? -1
        let levels: [Fidelity: Double] = [.full: 3, .steps: 2, .milestones: 1]
        let level: Double = levelInForce.flatMap { levels[$0] } ?? 0
        let resetsIn: Double = budget?.resetsAt.map { max(0, $0 - now) } ?? -1
        var forecast: Double = -1
        if let budget, budget.limit != nil {
            forecast = BudgetPlanner.forecastRuns(
                budget: budget,
                arrivalsPerSecond: arrivals.rate(at: now, priorPerDay: BudgetPlanner.priorRunsPerDay), at: now)
        }
        return [
            ("budget_updates_used", "Live Activity updates PushWard counted this period (-1: unknown).", [:], used),
            (
                "budget_notifications_used",
                "Notifications PushWard counted this period, alerts among them (-1: unknown).",
                [:], notifications.map { Double($0.used) } ?? -1
            ),
            (
                "budget_notifications_limit", "The period's allowance of notifications (-1: unlimited or unknown).",
                [:],
                notifications?.limit.map(Double.init) ?? -1
            ),
            (
                "budget_updates_limit", "The period's allowance of Live Activity updates (-1: unlimited or unknown).",
                [:], limit
            ),
            (
                "budget_level", "The level the budget planner chose last: 3 full, 2 steps, 1 milestones, 0 none yet.",
                [:], level
            ),
            (
                "budget_resets_in_seconds", "Seconds until PushWard's count starts over (-1: unknown).", [:],
                resetsIn
            ),
            (
                "budget_forecast_runs",
                "Runs the budget planner expects to want a card before the reset (-1: no limit or unknown).", [:],
                forecast
            ),
        ]
    }

    /// The latest snapshot, written by the service and read by any thread.
    public final class Board: @unchecked Sendable {
        private let lock = NSLock()
        private var latest: ServiceSnapshot

        init(_ initial: ServiceSnapshot) {
            latest = initial
        }

        var snapshot: ServiceSnapshot {
            get { lock.withLock { latest } }
            set { lock.withLock { latest = newValue } }
        }
    }
}
