import BridgeCore
import BridgeStore

/// One turn of the service's work, inside its write transaction (`BridgeService.turn`): what the
/// body of a turn may use, and what it asks of the door when the transaction is done.
///
/// The door hands the engine over for the turn (moved in, not copied: the engine's dictionaries
/// stay uniquely referenced, so a change to one run does not copy every run) and takes it back
/// after the body, whatever the body did. After the body it writes the rows of whatever the engine
/// changed, commits, publishes the snapshot once and, when `wakesDispatcher` is set or the turn
/// planned an alert, wakes the dispatcher once. So no feature opens a transaction, saves the
/// engine's changes, publishes or wakes anything itself, and none can forget one of the three.
struct ServiceTurn: ~Copyable {
    /// The database, inside the turn's transaction: everything written here commits or rolls back
    /// with the engine's rows.
    let database: BridgeDatabase
    /// The core, moved in for the turn.
    var engine: BridgeEngine
    /// The time the turn's decisions and rows are taken at. A body that learns the time of what it
    /// applies only inside the transaction (the deliveries other instances committed) sets it.
    var now: UnixTime
    let log: Logger
    let metrics: Metrics
    /// Set by a body whose work gives the dispatcher something to do (a card changed, an answer
    /// recorded): the door signals it once the transaction committed.
    var wakesDispatcher = false
    /// Whether the engine's rows written by the door held a planned alert (the door tells the
    /// alert outbox, and wakes the dispatcher).
    var plannedAlerts = false

    /// The engine's history, read from this turn's transaction.
    var history: StoreHistory { StoreHistory(database) }

    /// Adds what the pacer held back since the last count to `/metrics`.
    mutating func countPacerHeld() {
        metrics.countPacerHeld(of: &engine)
    }

    /// A request met `429 rate_limit.exceeded`: everything waits, in one place.
    mutating func noteRateLimited(retryAfter: Double?) {
        let until = engine.noteRateLimited(retryAfter: retryAfter, at: now)
        log.warning("PushWard rate limit reached; every request waits", ["push.resume_at": .number(until)])
        wakesDispatcher = true
    }

    /// The one time a refused routing target is said, whichever request (a create, an alert) met
    /// it first.
    func sayTargetsRefused(_ metadata: [String: JSONValue]) {
        metrics.add("routing_targets_refused_total")
        log.error(
            "PushWard refused a routing target (a personal key cannot route; use an organisation key): cards and alerts now go without one, to everyone the key reaches",
            metadata)
    }
}
