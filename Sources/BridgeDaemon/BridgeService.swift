import BridgeCore
import BridgeStore
import Foundation

/// The one owner of the database and of the core's state, on a dispatch queue of its own (SQLite
/// calls block). Every write goes through one door, `turn`: a transaction with the leader's fence
/// whose body gets the database and the engine (`ServiceTurn`), after which the engine's rows are
/// saved, the snapshot published and the dispatcher woken, once.
///
/// Deliveries commit in groups: HTTP threads queue them (`IngestQueue`), and each drain takes up
/// to 64 waiting deliveries into one turn (`DeliveryRecorder`). Only after that `COMMIT` does each
/// delivery get its answer (202, 200, 400). A group whose commit fails is rolled back and retried
/// one delivery at a time, so only a delivery the store cannot take gets a 503.
///
/// Besides the database, the engine and what it is built with, it holds one value per feature,
/// each a type in a file of its own whose methods take the turn: the leader's standing
/// (`LeaderState`), ingest (`DeliveryRecorder`), alerts (`AlertSender`), the cards' requests
/// (`RequestDesk`), publishing (`Publishing`) and retention (`RetentionRunner`). Features that
/// keep no state between turns (`ActionMint`, `ActionPresses`, `RecoveryLedger`, `WidgetAnswers`)
/// are held by what calls them and come in through the door. `ServiceShapeTests` keeps it so.
public actor BridgeService {
    /// The service's queue and what other threads leave on it (`ServiceQueue`).
    nonisolated let queue: ServiceQueue
    public nonisolated var unownedExecutor: UnownedSerialExecutor { queue.executor.asUnownedSerialExecutor() }

    let database: BridgeDatabase
    var engine: BridgeEngine
    /// The configuration, this instance's name and what follows from them (`ServiceSettings`).
    public nonisolated let settings: ServiceSettings
    nonisolated let log: Logger
    public nonisolated let metrics: Metrics
    /// Signalled after a turn that gave the dispatcher something to do.
    public nonisolated let wakeups: WakeupSignal

    var lead: LeaderState
    let recorder: DeliveryRecorder
    var alerts: AlertSender
    var requests: RequestDesk
    var publishing: Publishing
    var retention: RetentionRunner
    /// Set when a failed commit could not be followed by a reload from the store.
    var needsReload = false

    /// The epoch this instance leads under, as the service last heard it; nil while following.
    var leaderEpoch: Int64? { lead.epoch }

    /// `engine`: complete, as `EngineLoader` builds it from `configuration` (the service never
    /// patches settings into it). The signals, the fence and the snapshot's board are the daemon's,
    /// shared with the dispatcher, the loops and the status page; a test may leave them out.
    /// `answers`: on PostgreSQL, a second connection to the same database, on which every delivery
    /// is committed for the leader and answered (`WaitingDeliveryCommitter`); without it
    /// deliveries commit on `database`, on this actor's queue.
    public init(
        database: BridgeDatabase, engine: BridgeEngine, configuration: BridgeConfiguration, logger: Logger,
        metrics: Metrics = Metrics(), wakeups: WakeupSignal = WakeupSignal(),
        usageRefresh: WakeupSignal = WakeupSignal(), fence: LeaderFence? = nil,
        snapshots: ServiceSnapshot.Board? = nil, answers: BridgeDatabase? = nil,
        instance: String = ProcessInfo.processInfo.hostName + " pid \(getpid())"
    ) {
        settings = ServiceSettings(configuration: configuration, instance: instance)
        self.database = database
        self.engine = engine
        log = logger
        self.metrics = metrics
        self.wakeups = wakeups
        queue = ServiceQueue(
            answers: answers.map {
                WaitingDeliveryCommitter(
                    database: $0, metrics: metrics, logger: logger, bodyMemory: Double(configuration.payloadRetention))
            })
        lead = LeaderState(fence: fence ?? LeaderFence(board: database.isShared ? LeadershipBoard() : nil))
        recorder = DeliveryRecorder(logger: logger, metrics: metrics, payloadRetention: configuration.payloadRetention)
        alerts = AlertSender(
            sendsNotifications: configuration.sendsNotifications,
            nextDue: configuration.sendsNotifications ? ((try? database.nextAlertDue()) ?? nil) : nil)
        requests = RequestDesk(usageRefresh: usageRefresh)
        publishing = Publishing(board: snapshots ?? ServiceSnapshot.Board(ServiceSnapshot(engine: engine, inFlight: 0)))
        retention = RetentionRunner(
            settings: configuration.retention, payloadRetention: configuration.payloadRetention)
    }

    // MARK: The door

    /// Whose writes a turn makes: the leader's (the transaction starts with the fence, so a deposed
    /// leader's turn changes nothing and it steps down), or any instance's (a press, which a
    /// follower records too; the engine's rows are then left for the leader).
    enum Writer {
        case leader
        case anyInstance
    }

    /// The one way in for a turn of work that writes: opens the transaction (with the leader's
    /// fence unless `writer` says any instance may), hands `body` the database, the engine and the
    /// turn's log and metrics (`ServiceTurn`), then writes the rows of whatever the engine changed,
    /// commits, publishes the snapshot, and wakes the dispatcher when the turn asked or planned an
    /// alert: each once. Nothing else in the daemon opens a write transaction on the service's
    /// database or does those three.
    ///
    /// A turn that fails rolls back: what the engine changed stays pending, to be written by the
    /// next turn (a caller that cannot trust the engine after a failure reloads it from the store,
    /// as `ingest` does). A turn that found another instance leading steps down (`purpose` says
    /// which turn) and throws `LeadLost`.
    @discardableResult
    func turn<T>(
        _ purpose: String, at now: UnixTime, writer: Writer = .leader, _ body: (inout ServiceTurn) throws -> T
    ) throws -> T {
        var turn = ServiceTurn(database: database, engine: BridgeEngine(), now: now, log: log, metrics: metrics)
        // Moved in, not copied: the engine's storage stays uniquely referenced.
        swap(&turn.engine, &engine)
        var outcome: Result<T, any Error>
        do {
            outcome = .success(
                try database.write { database throws -> T in
                    if writer == .leader { try lead.fence(database) }
                    let value = try body(&turn)
                    // The rows of a follower's engine are the leader's to write.
                    guard writer == .leader else { return value }
                    let changes = turn.engine.takeChanges()
                    guard !changes.isEmpty else { return value }
                    do {
                        let rows = turn.engine.rows(for: changes, at: turn.now)
                        try database.save(rows, at: turn.now)
                        turn.plannedAlerts = !rows.alerts.isEmpty
                    } catch {
                        turn.engine.changes = changes
                        throw error
                    }
                    return value
                })
        } catch {
            outcome = .failure(error)
        }
        swap(&turn.engine, &engine)
        switch outcome {
        case .failure(let error) where error is LeadLost:
            stepDown(because: "\(purpose) found another instance leading")
            throw error
        case .failure(let error):
            throw error
        case .success(let value):
            if turn.plannedAlerts { alerts.outbox.planned(at: turn.now) }
            publishSnapshot()
            if turn.wakesDispatcher || turn.plannedAlerts { wakeups.signal() }
            return value
        }
    }

    /// A turn whose failure needs no more than a line: what it could not write stays pending in
    /// the engine and goes with the next turn. A turn that found another instance leading has
    /// stepped down; nothing more to say.
    func step(_ purpose: String, at now: UnixTime, _ body: (inout ServiceTurn) throws -> Void) {
        do {
            try turn(purpose, at: now, body)
        } catch is LeadLost {
            return
        } catch {
            log.error(
                "could not save a turn's work; what it changed is written with the next turn",
                ["turn": .string(purpose), "error": .string("\(error)")])
        }
    }

    /// Runs `body` on the service's queue and waits for it, from a thread that is not the queue's
    /// and need not be async: a service starting (`Daemon.makeStore`). A dispatch queue's `sync`,
    /// not a task waited on with a semaphore, so it never holds a thread Swift's small cooperative
    /// pool needs.
    nonisolated func onQueue<T: Sendable>(_ body: @Sendable (isolated BridgeService) -> T) -> T {
        queue.executor.queue.sync { assumeIsolated { service in body(service) } }
    }

    /// Reads the store and the engine without writing: for what the loops look up.
    func read<T>(_ body: (BridgeDatabase, borrowing BridgeEngine) throws -> T) rethrows -> T {
        try body(database, engine)
    }

    // MARK: Deliveries

    /// Records and applies a verified delivery; `completion` gets the answer, on the store's
    /// queue, only after the delivery is committed. Does not block: the delivery joins the queue
    /// and commits in the next group (see `IngestQueue`).
    public nonisolated func submit(
        _ delivery: IncomingDelivery, completion: @escaping @Sendable (IngestResult) -> Void
    ) {
        queue.submit(delivery, completion: completion, drain: scheduleDrain)
    }

    /// Drains one group on the actor's own queue, behind whatever actor work is already queued
    /// there, so the dispatcher's turns interleave with ingest groups under sustained load.
    private nonisolated func scheduleDrain() {
        queue.async { [self] in
            assumeIsolated { service in
                if service.queue.drain(service.ingest) { service.scheduleDrain() }
            }
        }
    }

    /// Deliveries received and not answered yet (queued, or in the commit under way).
    public nonisolated var deliveriesWaiting: Int { queue.waiting }

    /// Sets how long a commit waits for another connection's write lock before its deliveries get a
    /// 503 (`SQLiteConnection.busyTimeoutMilliseconds` unless set). For tests that hold the lock
    /// until their own conditions hold, past their time limit.
    public func setStoreBusyTimeout(milliseconds: Int32) throws {
        try database.setBusyTimeout(milliseconds: milliseconds)
    }

    /// Records and applies deliveries in one turn, in order; one answer per delivery.
    ///
    /// When the commit fails, the group rolls back and each delivery is tried again alone, so one
    /// delivery the store cannot take (a 503 for it) does not cost the others theirs.
    public func ingest(_ deliveries: [IncomingDelivery]) -> [IngestResult] {
        guard !deliveries.isEmpty else { return [] }
        // Another instance leads: commit for it to apply.
        if !lead.allows(.write) { return queueForLeader(deliveries) }
        if needsReload { reloadFromStore() }
        do {
            let at = deliveries.map(\.receivedAt).max() ?? 0
            let results = try turn("a delivery's commit", at: at) { turn throws -> [IngestResult] in
                let results = try deliveries.map { try recorder.record($0, in: &turn) }
                turn.wakesDispatcher = results.contains { $0.status == 202 }
                return results
            }
            logLevelChange()
            metrics.observe("ingest_batch_size", Double(deliveries.count), buckets: Metrics.batchBuckets)
            metrics.countAnswers(deliveries, results)
            return results
        } catch is LeadLost {
            return queueForLeader(deliveries)
        } catch {
            // The transaction rolled back; the store is the truth. Reloading from it (rather than
            // copying the whole engine before every group, which costs a copy of every run) puts
            // the core back where the store is.
            reloadFromStore()
            if deliveries.count > 1 {
                log.warning(
                    "could not commit a group of deliveries; committing each alone",
                    ["count": .number(Double(deliveries.count)), "error": .string("\(error)")])
                return deliveries.map { ingest([$0])[0] }
            }
            return [DeliveryRecorder.unstored(deliveries[0], error: error, log: log, metrics: metrics)]
        }
    }

    /// Says once when the push budget moved new runs to another level, after the group that did it.
    private func logLevelChange() {
        guard let previous = publishing.levelChanged(to: engine.levelInForce) else { return }
        log.notice(
            "push budget level changed",
            [
                "budget.level": .string(engine.levelInForce?.rawValue ?? "none"),
                "budget.previous": .string(previous?.rawValue ?? "none"),
                "budget.used": engine.budget.map { .number(Double($0.used)) } ?? .null,
                "budget.limit": engine.budget?.limit.map { .number(Double($0)) } ?? .null,
            ])
    }

    /// Rebuilds the core's state from the store after a failed commit (or on taking the lead);
    /// when the store cannot be read either, tries again before the next delivery. Applying a
    /// delivery twice is harmless (state merges are idempotent), so a redelivery after a 503 ends
    /// in the right state.
    private func reloadFromStore() {
        do {
            // The requests of the current window were sent all the same: the pacer keeps them.
            engine = try settings.loader.load(
                from: database, filter: engine.filter, pacer: engine.pacer, at: Date().timeIntervalSince1970)
            needsReload = false
        } catch {
            needsReload = true
            log.error(
                "could not reload state from the store; trying again with the next delivery",
                ["error": .string("\(error)")])
        }
        publishSnapshot()
    }

    // MARK: Leadership

    /// Hears a new role from the leadership loop (on its thread); takes it on the actor's queue,
    /// in the order the loop saw them.
    nonisolated func roleChanged(to role: LeaderLease.Role) {
        queue.async { [self] in
            assumeIsolated { service in service.take(role) }
        }
    }

    private func take(_ role: LeaderLease.Role) {
        guard case .leading(let epoch) = role else {
            return stepDown(because: "the leader lease is held by another instance or cannot be reached")
        }
        guard lead.take(epoch) else { return }
        // What the previous leader wrote is the truth: the engine is read again from it.
        reloadFromStore()
        lead.waitOutClaims(of: epoch, in: database, cards: engine.sessions.keys, log: log)
        applyWaiting()
        wakeups.signal()
    }

    /// Stops applying and sending; deliveries from now on are committed for the leader.
    private func stepDown(because reason: String) {
        guard lead.stepDown() else { return }
        log.notice("following: deliveries are committed for the leader to apply", ["reason": .string(reason)])
    }

    /// Commits `deliveries` for the leader on this actor's connection: for a delivery that came
    /// here (a lookup's observations, a group that found another instance leading).
    private func queueForLeader(_ deliveries: [IncomingDelivery]) -> [IngestResult] {
        WaitingDeliveryCommitter.commit(deliveries, to: database, metrics: metrics, logger: log)
    }

    /// Has the leader apply the waiting deliveries soon, once however often it is asked meanwhile.
    nonisolated func noteWaitingDeliveries() {
        guard queue.scheduleApply() else { return }
        queue.async { [self] in
            assumeIsolated { service in service.applyWaiting() }
        }
    }

    /// Applies what the instances committed, one group per turn (`DeliveryRecorder.applyWaiting`),
    /// then, when more wait, another turn behind whatever else is queued on the actor, so a backlog
    /// never holds the answers up. On the leader only.
    func applyWaiting() {
        queue.applyStarted()
        guard lead.isShared, lead.allows(.write) else { return }
        do {
            let applied = try turn("applying deliveries", at: Date().timeIntervalSince1970) {
                try recorder.applyWaiting(in: &$0)
            }
            guard applied > 0 else { return }
            logLevelChange()
            metrics.add("deliveries_applied_total", Double(applied))
            metrics.observe("ingest_batch_size", Double(applied), buckets: Metrics.batchBuckets)
            if applied == DeliveryRecorder.applyGroup { noteWaitingDeliveries() }
        } catch {
            reloadFromStore()
            if !(error is LeadLost) {
                log.error(
                    "could not apply committed deliveries; trying again at the next poll",
                    ["error": .string("\(error)")])
            }
        }
    }

    // MARK: Dispatching

    /// Moves time on (completions by grace) and returns every request due now, one per card and
    /// none for a card whose previous request is still out: ten changes during one request become
    /// one follow-up, computed from the latest state when it is sent. The cards' claims (several
    /// instances) and what the engine moved are committed in one turn before any request goes; a
    /// turn that fails sends nothing, and its cards are looked at again. Most of the dispatcher's
    /// turns have nothing to commit: they open no transaction.
    public func dueRequests(at now: UnixTime) -> [PlannedRequest] {
        guard lead.allows(.start) else { return [] }
        // A card whose claim by a previous leader ended is looked at again.
        engine.markDirty(lead.endClaims(at: now))
        let due = engine.dueRequests(at: now, inFlight: requests.inFlight.cards.union(lead.claimedElsewhere.keys))
        let planned = due.map(\.request.slug)
        countPacerHeld()
        alerts.planFinishedRuns(&engine, history: StoreHistory(database), log: log)
        guard (lead.isShared && !planned.isEmpty) || !engine.changes.isEmpty else {
            publishSnapshot()
            requests.inFlight.send(cards: planned)
            return due
        }
        do {
            try turn("claiming a card", at: now) { try lead.claim(planned, in: $0) }
        } catch {
            engine.markDirty(planned)
            if !(error is LeadLost) {
                log.warning(
                    "could not claim cards before sending; trying again at the next turn",
                    ["error": .string("\(error)")])
            }
            return []
        }
        requests.inFlight.send(cards: planned)
        return due
    }

    /// When something next falls due, for the dispatcher's sleep; nil when nothing is pending.
    public func nextWakeup(after now: UnixTime) -> UnixTime? {
        [
            engine.nextWakeup(after: now), alerts.outbox.nextWakeup, engine.nextWidgetWakeup(after: now),
            lead.nextClaimEnd,
        ]
        .compactMap { $0 }.min()
    }

    /// Records what became of a card's request (`RequestDesk.record`).
    public func complete(_ planned: PlannedRequest, answer: PushWardAnswer, dryRun: Bool, at now: UnixTime) {
        requests.inFlight.answered(card: planned.request.slug)
        step("recording a push", at: now) { [requests, claimEpoch = lead.claimEpoch] turn in
            try requests.record(planned, answer: answer, dryRun: dryRun, claimEpoch: claimEpoch, in: &turn)
        }
    }

    /// The alerts due now, each counted as attempted before it is handed out (`AlertSender.due`).
    public func dueAlerts(at now: UnixTime) -> [AlertRecord] {
        guard lead.allows(.start), alerts.outbox.opens(at: now) else { return [] }
        do {
            return try turn("starting an alert's attempt", at: now) { try alerts.due(in: &$0) }
        } catch is LeadLost {
            // Deposed: what was planned goes back to the new leader, which reads the rows.
            return []
        } catch {
            log.error("could not read the alerts due; trying again shortly", ["error": .string("\(error)")])
            alerts.outbox.unreadable(at: now)
            return []
        }
    }

    /// Records what PushWard answered to an alert's POST, and what follows (`AlertSender.complete`).
    public func completeAlert(_ record: AlertRecord, answer: NotificationAnswer, dryRun: Bool, at now: UnixTime) {
        alerts.outbox.finished(record.id)
        step("recording an alert's answer", at: now) {
            try alerts.complete(record, answer: answer, dryRun: dryRun, in: &$0)
        }
    }

    /// Every widget request due now, one per widget and none for a widget whose request is out.
    public func dueWidgetRequests(at now: UnixTime) -> [PlannedWidgetRequest] {
        guard lead.allows(.start) else { return [] }
        let due = engine.dueWidgetRequests(at: now, inFlight: requests.inFlight.widgets)
        countPacerHeld()
        requests.inFlight.send(widgets: due.map(\.request.slug))
        return due
    }

    /// Records what became of a widget request (`WidgetAnswers`).
    public func completeWidget(_ planned: PlannedWidgetRequest, answer: PushWardAnswer, at now: UnixTime) {
        requests.inFlight.answered(widget: planned.request.slug)
        step("recording a widget's answer", at: now) { WidgetAnswers.record(planned, answer: answer, in: &$0) }
    }

    /// Whether the dispatcher should ask PushWard which activities it preempted (at start, and
    /// after an answer that suggests an eviction; at most every few seconds). Only the leader asks.
    public func takePreemptedCheck(at now: UnixTime) -> Bool {
        lead.allows(.start) && engine.takePreemptedCheck(at: now)
    }

    /// PushWard's list of preempted activities: the bridge's cards in it go to the summary card
    /// and are never patched as if showing (`BridgeEngine.observePreempted`).
    public func observePreempted(_ slugs: [String], at now: UnixTime) {
        guard lead.allows(.start) else { return }
        step("recording the preempted activities", at: now) { turn in
            turn.engine.observePreempted(Set(slugs), at: now)
            turn.wakesDispatcher = true
        }
    }

    /// A request planned but not sent, because the lead is no longer trusted: looked at again once
    /// it is (or by the next leader, which reads the card from the database).
    func abandon(_ planned: PlannedRequest) {
        requests.inFlight.answered(card: planned.request.slug)
        engine.markDirty([planned.request.slug])
    }

    func abandon(_ planned: PlannedWidgetRequest) { requests.inFlight.answered(widget: planned.request.slug) }

    func abandon(_ alert: AlertRecord) { alerts.outbox.finished(alert.id) }

    /// Whether a request outside the cards, widgets and alerts (a read: `GET /auth/me`, `GET
    /// /activities`) may go to PushWard now; takes the pacer's room when it does. When not, the
    /// time to ask again.
    public func admitRead(at now: UnixTime) -> (admitted: Bool, retryAt: UnixTime) {
        let admitted = engine.admitPaced(.reading, at: now)
        countPacerHeld()
        let retryAt =
            [engine.gate.rateLimitedUntil, engine.pacer?.roomAt(for: .reading, after: now)]
            .compactMap { $0 }.filter { $0 > now }.max() ?? now + 1
        return (admitted, retryAt)
    }

    /// A request outside the cards met `429 rate_limit.exceeded`: everything waits, in one place.
    public func noteRateLimited(retryAfter: Double?, at now: UnixTime) {
        step("recording PushWard's rate limit", at: now) { $0.noteRateLimited(retryAfter: retryAfter) }
    }

    private func countPacerHeld() {
        metrics.countPacerHeld(of: &engine)
    }

    // MARK: Housekeeping

    /// Lets the core drop finished runs and idle ended cards (`BridgeEngine.forget`): storage keeps
    /// them and a delivery that needs one reads it back, so memory follows the work in flight.
    public func forgetFinished(at now: UnixTime) {
        // A follower's engine is what it loaded at start and never moves: its runs would all look
        // abandoned one day, and their release is the leader's to write (the fence refuses it).
        guard lead.allows(.write) else { return }
        // Abandoned runs were released: written now, let go of on the next pass.
        step("releasing abandoned runs", at: now) { $0.engine.forget(at: now) }
    }

    /// Applies new filters (SIGHUP): deliveries from now on are judged by them.
    public func updateFilter(_ filter: DeliveryFilter) {
        engine.updateFilter(filter)
    }

    /// Takes what PushWard says the month's usage is (`GET /auth/me`) as the planner's budget,
    /// with `pushward.budget` applied: a number caps the limit, `unlimited` keeps the planner out.
    /// Near PushWard's 50 activities, the oldest ended ones are planned for deletion. Returns the
    /// budget, and the one it replaced.
    @discardableResult
    public func updateBudget(_ usage: PushWardUsage, at now: UnixTime) -> (budget: PushBudget, previous: PushBudget?) {
        let budget = settings.configuration.pushwardBudget.budget(from: usage)
        alerts.noteUsage(usage, log: log, at: now)
        let previous = engine.budget
        engine.budget = budget
        publishing.notifications = (usage.notificationsUsed, usage.notificationsLimit)
        engine.noteWidgetUsage(used: usage.widgetUpdatesUsed, limit: usage.widgetUpdatesLimit)
        if let count = usage.activityCount, lead.allows(.write) {
            step("planning the tidying of PushWard's account", at: now) { turn in
                turn.engine.observeAccount(activityCount: count, at: now)
                turn.wakesDispatcher = true
            }
        } else {
            // Nothing to write: what the status page shows of the budget is published.
            publishSnapshot()
        }
        return (budget, previous)
    }

    /// Publishes what the gauges and the status page read (`Publishing.publish`).
    private func publishSnapshot() {
        guard publishing.publish(engine, inFlight: requests.inFlight.cards.count) == .later else { return }
        Task { [weak self] in
            try? await Task.sleep(for: Publishing.interval)
            await self?.publishScheduledCount()
        }
    }

    private func publishScheduledCount() {
        publishing.scheduledCountDue()
        publishSnapshot()
    }

    /// True when the database takes a write: what `/readyz` reports.
    public func isReady() -> Bool {
        database.canWrite()
    }

    /// Runs one retention batch per table (`RetentionRunner`) and returns whether anything is
    /// left. Each call is one job on the store's queue, so the caller calling again while work is
    /// left interleaves with ingest groups instead of holding the store for a whole pass.
    @discardableResult
    public func pruneRetention(at now: UnixTime) -> Bool {
        // One instance prunes what they share: the leader.
        guard lead.allows(.write) else { return false }
        return retention.batch(database, log: log, at: now)
    }
}
