import BridgeCore
import BridgeStore
import Foundation

/// The one owner of the database and of the core's state. Deliveries commit in groups: HTTP
/// threads queue them (`IngestQueue`), and each drain takes up to 64 waiting deliveries into one
/// transaction. Every delivery row is recorded and applied in order, then each run, job, step-history
/// entry and card the group touched (and the dispatch gate and arrival counts, when they changed)
/// is written once, with its desired content. Only after that `COMMIT` does each delivery get its
/// answer (202, 200, 400). A group whose commit fails is rolled back and retried one delivery at a
/// time, so only a delivery the store cannot take gets a 503. PushWard's answers are recorded here
/// too, each in a transaction of its own. Runs on its own dispatch queue, since SQLite calls block.
///
/// It owns the database and the engine, and holds one value for each other part of its work (the
/// leader's standing, the alert outbox, requests in flight, snapshot publishing, retention, and
/// what other threads read or leave without waiting), each in a file of its own. A new feature
/// adds a type of its own rather than fields here: `ServiceShapeTests` keeps the count at twelve.
public actor BridgeService {
    /// The service's queue and what other threads leave on it (`ServiceQueue`).
    nonisolated let queue: ServiceQueue
    public nonisolated var unownedExecutor: UnownedSerialExecutor { queue.executor.asUnownedSerialExecutor() }

    let database: BridgeDatabase
    var engine: BridgeEngine
    /// The configuration, this instance's name and what follows from them (`ServiceSettings`).
    public nonisolated let settings: ServiceSettings
    /// The log, the counters and the dispatcher's wake-ups (`ServiceOutlets`).
    nonisolated let outlets: ServiceOutlets
    /// What readers off the queue read without waiting (`ServiceBoards`).
    nonisolated let boards: ServiceBoards
    /// Whether this instance leads, and the one rule for leader-only work (`LeaderState`).
    var lead: LeaderState
    /// The alerts' sending (`AlertSender`).
    var alerts: AlertSender
    /// Cards and widgets with a request out (`InFlight`).
    var inFlight = InFlight()
    /// When the snapshot's counts were last taken, and the budget level last logged (`Publishing`).
    private var publishing = Publishing()
    /// The retention pass under way: what it removed so far, and where the step-history scan stands.
    private var retention = RetentionPass()
    /// Set when a failed commit could not be followed by a reload from the store.
    private var needsReload = false
    /// Records and applies each delivery (`DeliveryRecorder`).
    let recorder: DeliveryRecorder

    /// `engine`: complete, as `EngineLoader` builds it from `configuration` (the service never
    /// patches settings into it). `answers`: on PostgreSQL, a second connection to the same
    /// database, on which every delivery is committed for the leader and answered
    /// (`WaitingDeliveryCommitter`); without it deliveries commit on `database`, on this actor's queue.
    public init(
        database: BridgeDatabase, engine: BridgeEngine, configuration: BridgeConfiguration, logger: Logger,
        metrics: Metrics = Metrics(), checkpointer: WALCheckpointer? = nil, answers: BridgeDatabase? = nil,
        instance: String = ProcessInfo.processInfo.hostName + " pid \(getpid())"
    ) {
        let settings = ServiceSettings(configuration: configuration, instance: instance)
        self.settings = settings
        self.database = database
        self.engine = engine
        self.outlets = ServiceOutlets(logger: logger, metrics: metrics)
        self.recorder = DeliveryRecorder(
            logger: logger, metrics: metrics, payloadRetention: configuration.payloadRetention)
        self.queue = ServiceQueue(
            answers: answers.map {
                WaitingDeliveryCommitter(
                    database: $0, metrics: metrics, logger: logger,
                    bodyMemory: Double(configuration.payloadRetention))
            })
        self.boards = ServiceBoards(
            snapshot: ServiceSnapshot(engine: engine, inFlight: 0),
            leadership: database.isShared ? LeadershipBoard() : nil, checkpointer: checkpointer,
            databasePath: database.path)
        self.lead = LeaderState(fence: boards.leaderFence)
        self.alerts = AlertSender(
            sendsNotifications: configuration.sendsNotifications,
            nextDue: settings.sendsAlerts ? ((try? database.nextAlertDue()) ?? nil) : nil)
    }

    // MARK: Read without entering the queue

    public nonisolated var configuration: BridgeConfiguration { settings.configuration }
    /// This instance's name (`ServiceSettings.instance`).
    public nonisolated var instance: String { settings.instance }
    /// Whether the configuration has alerts at all: the dispatcher asks on every turn.
    public nonisolated var sendsAlerts: Bool { settings.sendsAlerts }
    /// Whether requests may carry buttons whose tokens are minted as they go out (`actions`).
    public nonisolated var sendsButtons: Bool { settings.sendsButtons }
    /// Whether home-screen widgets are configured: the dispatcher asks for their requests.
    public nonisolated var sendsWidgets: Bool { settings.sendsWidgets }
    /// Whether requests are paced (`ServiceSettings.pacesRequests`).
    public nonisolated var pacesRequests: Bool { settings.pacesRequests }
    nonisolated var logger: Logger { outlets.logger }
    public nonisolated var metrics: Metrics { outlets.metrics }
    /// Signalled whenever a delivery changed a card, so the dispatcher looks at once.
    public nonisolated var wakeups: WakeupSignal { outlets.wakeups }
    /// Signalled when PushWard said the quota is spent: the budget is read again at once.
    public nonisolated var usageRefresh: WakeupSignal { outlets.usageRefresh }
    /// What recovery from GitHub last did (`GitHubRecovery`), for the gauges and the status page.
    public nonisolated var recovery: RecoveryBoard { boards.recovery }
    /// On PostgreSQL, where several instances share the database: whether this one leads
    /// (`LeadershipService` keeps it). Nil on SQLite, whose one instance always leads.
    public nonisolated var leadership: LeadershipBoard? { boards.leaderFence.board }
    /// Whether a leader-only request may go out now (`LeaderFence`): asked by every PushWard and
    /// GitHub request a leader makes, just before it goes.
    public nonisolated var leaderFence: LeaderFence { boards.leaderFence }
    /// The epoch this instance leads under, as the service last heard it; nil while following.
    var leaderEpoch: Int64? { lead.epoch }

    /// Records and applies a verified delivery; `completion` gets the answer, on the store's
    /// queue, only after the delivery is committed. Does not block: the delivery joins the queue
    /// and commits in the next group (see `IngestQueue`).
    public nonisolated func submit(
        _ delivery: IncomingDelivery, completion: @escaping @Sendable (IngestResult) -> Void
    ) {
        if let answers = queue.answers { return answers.submit(delivery, completion: completion) }
        if queue.ingest.append(IngestQueue.Ticket(delivery: delivery, completion: completion)) { scheduleDrain() }
    }

    /// Drains on the actor's own queue, behind whatever actor work is already queued there, so
    /// the dispatcher's turns interleave with ingest groups under sustained load.
    private nonisolated func scheduleDrain() {
        queue.async { [self] in
            assumeIsolated { service in service.drainIngestQueue() }
        }
    }

    /// Deliveries received and not answered yet (queued, or in the commit under way).
    public nonisolated var deliveriesWaiting: Int { queue.waiting }

    /// Sets how long a commit waits for another connection's write lock before its deliveries get a
    /// 503 (`SQLiteConnection.busyTimeoutMilliseconds` unless set). On the actor, since the connection
    /// is used only from there. For tests that hold the lock until their own conditions hold: they set
    /// it past their time limit, so a slow machine (a sanitizer) cannot run the wait out under them.
    public func setStoreBusyTimeout(milliseconds: Int32) throws {
        try database.setBusyTimeout(milliseconds: milliseconds)
    }

    private func drainIngestQueue() {
        let batch = queue.ingest.take()
        guard !batch.isEmpty else { return }
        let results = ingest(batch.map(\.delivery))
        // Committed: the answers go out from another thread (building each response, its
        // metrics, resuming its connection), so the store's queue takes the next group at once.
        let ingestQueue = queue.ingest
        DispatchQueue.global().async {
            for (ticket, result) in zip(batch, results) { ingestQueue.answer(ticket, with: result) }
        }
        scheduleDrain()
    }

    /// Records and applies deliveries in one transaction, in order; one answer per delivery.
    ///
    /// When the commit fails, the group rolls back and each delivery is tried again alone, so one
    /// delivery the store cannot take (a 503 for it) does not cost the others theirs.
    public func ingest(_ deliveries: [IncomingDelivery]) -> [IngestResult] {
        guard !deliveries.isEmpty else { return [] }
        // Another instance leads: commit for it to apply (`BridgeService+Leadership.swift`).
        if !lead.allows(.write) { return queueForLeader(deliveries) }
        if needsReload { reloadFromStore() }
        do {
            let at = deliveries.map(\.receivedAt).max() ?? 0
            let results = try turn("a delivery's commit", at: at) { turn throws -> [IngestResult] in
                var results: [IngestResult] = []
                results.reserveCapacity(deliveries.count)
                for delivery in deliveries { results.append(try recorder.record(delivery, in: &turn)) }
                // The door writes one row per run and card the group touched, as they stand after all of it.
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
                logger.warning(
                    "could not commit a group of deliveries; committing each alone",
                    ["count": .number(Double(deliveries.count)), "error": .string("\(error)")])
                return deliveries.map { ingest([$0])[0] }
            }
            let delivery = deliveries[0]
            metrics.add(
                "deliveries_total",
                labels: ["event": Metrics.eventLabel(delivery.event), "outcome": "store_unavailable"])
            logger.error(
                "could not commit a delivery; GitHub is told 503 and can redeliver it",
                [
                    "github.delivery": .string(delivery.id), "github.event": .string(delivery.event),
                    "error": .string("\(error)"),
                ])
            return [
                IngestResult(
                    status: 503,
                    body: [
                        "error": "store_unavailable", "detail": "the delivery could not be stored; redeliver it later",
                    ])
            ]
        }
    }

    // MARK: The door

    /// Whose writes a turn makes: the leader's (the transaction starts with the fence, so a deposed
    /// leader's turn changes nothing and it steps down), or any instance's (a press, which a
    /// follower records too).
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
        var turn = ServiceTurn(database: database, engine: BridgeEngine(), now: now, log: logger, metrics: metrics)
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
        // The engine back, whatever the body did.
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

    /// Says once when the push budget moved new runs to another level, after the group that did it.
    func logLevelChange() {
        guard let previous = publishing.levelChanged(to: engine.levelInForce) else { return }
        logger.notice(
            "push budget level changed",
            [
                "budget.level": .string(engine.levelInForce?.rawValue ?? "none"),
                "budget.previous": .string(previous?.rawValue ?? "none"),
                "budget.used": engine.budget.map { .number(Double($0.used)) } ?? .null,
                "budget.limit": engine.budget?.limit.map { .number(Double($0)) } ?? .null,
            ])
    }

    /// Rebuilds the core's state from the store after a failed commit; when the store cannot be
    /// read either, tries again before the next delivery. Applying a delivery twice is harmless
    /// (state merges are idempotent), so a redelivery after a 503 ends in the right state.
    func reloadFromStore() {
        do {
            // The requests of the current window were sent all the same: the pacer keeps them.
            engine = try settings.loader.load(
                from: database, filter: engine.filter, pacer: engine.pacer, at: Date().timeIntervalSince1970)
            needsReload = false
        } catch {
            needsReload = true
            logger.error(
                "could not reload state from the store; trying again with the next delivery",
                [
                    "error": .string("\(error)")
                ])
        }
    }

    // MARK: Dispatching

    /// The alerts due now, each counted as attempted before it is handed out (`AlertSender.due`).
    public func dueAlerts(at now: UnixTime) -> [AlertRecord] {
        guard lead.allows(.start), alerts.outbox.opens(at: now) else { return [] }
        do {
            return try turn("starting an alert's attempt", at: now) { try alerts.due(in: &$0) }
        } catch is LeadLost {
            // Deposed: what was planned goes back to the new leader, which reads the rows.
            return []
        } catch {
            logger.error("could not read the alerts due; trying again shortly", ["error": .string("\(error)")])
            alerts.outbox.unreadable(at: now)
            return []
        }
    }

    /// Records what PushWard answered to an alert's POST, and what follows from it
    /// (`AlertSender.complete`).
    public func completeAlert(_ record: AlertRecord, answer: NotificationAnswer, dryRun: Bool, at now: UnixTime) {
        alerts.outbox.finished(record.id)
        do {
            try turn("recording an alert's answer", at: now) {
                try alerts.complete(record, answer: answer, dryRun: dryRun, in: &$0)
            }
        } catch is LeadLost {
            return
        } catch {
            logger.error(
                "could not record an alert's answer",
                ["alert.id": .number(Double(record.id)), "error": .string("\(error)")])
        }
    }

    /// Moves time on (completions by grace) and returns every request due now, one per card and
    /// none for a card whose previous request is still out: ten changes during one request become
    /// one follow-up, computed from the latest state when it is sent.
    ///
    /// One turn: the cards' claims (several instances) and what the engine moved are committed
    /// before any request goes. A turn that fails sends nothing; its cards are looked at again.
    public func dueRequests(at now: UnixTime) -> [PlannedRequest] {
        guard lead.allows(.start) else { return [] }
        let claimedElsewhere = cardsClaimedElsewhere(at: now)
        var planned: [String] = []
        do {
            let due = try turn("claiming a card", at: now) { turn throws -> [PlannedRequest] in
                let due = turn.engine.dueRequests(at: now, inFlight: inFlight.cards.union(claimedElsewhere))
                planned = due.map(\.request.slug)
                try claim(planned, in: turn)
                alerts.planFinishedRuns(in: &turn)
                return due
            }
            countPacerHeld()
            inFlight.send(cards: planned)
            return due
        } catch {
            countPacerHeld()
            engine.markDirty(planned)
            if !(error is LeadLost) {
                logger.warning(
                    "could not claim cards before sending; trying again at the next turn",
                    ["error": .string("\(error)")])
            }
            return []
        }
    }

    /// When something next falls due, for the dispatcher's sleep; nil when nothing is pending.
    public func nextWakeup(after now: UnixTime) -> UnixTime? {
        [
            engine.nextWakeup(after: now), alerts.outbox.nextWakeup, engine.nextWidgetWakeup(after: now),
            lead.nextClaimEnd,
        ]
        .compactMap { $0 }.min()
    }

    /// Records what became of a request: a 2xx moves the card on; anything else leaves the
    /// acknowledged content as it was, so the next attempt is computed against what PushWard holds.
    public func complete(_ planned: PlannedRequest, answer: PushWardAnswer, dryRun: Bool, at now: UnixTime) {
        inFlight.answered(card: planned.request.slug)
        let status: Int?
        let detail: String?
        switch answer {
        case .success(let code, _):
            status = code
            detail = nil
        case .problem(let problem):
            status = problem.status
            detail = problem.summary
        case .noAnswer(let reason):
            status = nil
            detail = reason
        }
        metrics.add(
            "pushward_requests_total",
            labels: ["kind": planned.kind.rawValue, "status": status.map(String.init) ?? "none"])
        step("recording a push", at: now) { turn in
            let quotaWasExhausted = turn.engine.gate.quotaExhausted(at: now)
            let targetsWereRefused = turn.engine.gate.targetsRefusedAt != nil
            let effect = turn.engine.handle(answer, for: planned, at: now, jitter: Double.random(in: 0...1))
            // Spent, or the account is full: the usage is read again (the oldest ended activities
            // are then tidied).
            switch effect {
            case .quotaExhausted, .roomNeeded: usageRefresh.signal()
            case .willRetry: turn.metrics.add("pushward_retries_total")
            default: break
            }
            Self.report(
                effect, planned: planned, quotaWasExhausted: quotaWasExhausted, targetsWereRefused: targetsWereRefused,
                in: turn)
            turn.wakesDispatcher = true
            if let epoch = lead.claimEpoch {
                try turn.database.releaseClaim(planned.request.slug, epoch: epoch)
            }
            try turn.database.insert(
                RequestRecord(
                    slug: planned.request.slug, run: planned.run, kind: planned.kind.rawValue,
                    method: planned.request.method.rawValue, path: planned.request.path,
                    body: planned.request.body.canonicalString, sentAt: now, status: status,
                    outcome: dryRun ? "dry-run" : Self.outcome(effect), detail: detail))
        }
    }

    static func outcome(_ effect: AnswerEffect) -> String {
        switch effect {
        case .acknowledged: "acknowledged"
        case .willRetry: "retry"
        case .recreating: "recreate"
        case .rejected: "rejected"
        case .rateLimited: "rate_limited"
        case .quotaExhausted: "quota_exhausted"
        case .unauthorized: "unauthorized"
        case .targetRefused: "target_refused"
        case .roomNeeded: "room_needed"
        }
    }

    /// Adds what the pacer held back since the last count to `/metrics`.
    func countPacerHeld() {
        metrics.countPacerHeld(of: &engine)
    }

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

    /// One log line per decision, at the level a person should see it.
    private static func report(
        _ effect: AnswerEffect, planned: PlannedRequest, quotaWasExhausted: Bool, targetsWereRefused: Bool,
        in turn: borrowing ServiceTurn
    ) {
        let logger = turn.log
        var metadata: [String: JSONValue] = [
            "activity.slug": .string(planned.request.slug), "push.kind": .string(planned.kind.rawValue),
            "run.id": .number(Double(planned.run.runID)), "run.attempt": .number(Double(planned.run.attempt)),
            "github.repository": .string(planned.run.repository),
        ]
        switch effect {
        case .acknowledged:
            logger.debug("PushWard acknowledged a request", metadata)
        case .willRetry(let retryAt, let breakerOpened):
            metadata["push.retry_at"] = .number(retryAt)
            logger.info("PushWard did not take a request; the card retries with its latest state", metadata)
            if breakerOpened {
                logger.warning("PushWard keeps failing: pausing all requests, then probing with one", metadata)
            }
        case .recreating:
            logger.warning("the activity was deleted on PushWard; creating it again and sending it whole", metadata)
        case .rejected(let detail):
            metadata["push.problem"] = .string(detail)
            logger.error("PushWard rejected a request; it is not sent again (a bug in the bridge)", metadata)
        case .rateLimited(let until):
            metadata["push.resume_at"] = .number(until)
            logger.warning("PushWard rate limit reached; every card waits", metadata)
        case .quotaExhausted(let until):
            metadata["push.resume_at"] = .number(until)
            if !quotaWasExhausted {
                logger.error(
                    "PushWard quota exhausted: nothing is sent until it resets; cards keep computing", metadata)
            }
        case .unauthorized(let status, let until):
            metadata["push.resume_at"] = .number(until)
            metadata["push.status"] = .number(Double(status))
            if status == 401 {
                logger.error(
                    "PushWard refused the API key (401): it is wrong or revoked; fix pushward.api_key", metadata)
            } else {
                logger.error("PushWard refused the API key (403): it lacks the activity:manage scope", metadata)
            }
        case .targetRefused(let detail):
            metadata["push.problem"] = .string(detail)
            if !targetsWereRefused { turn.sayTargetsRefused(metadata) }
        case .roomNeeded(let freeing, let retryAt):
            metadata["push.retry_at"] = .number(retryAt)
            if let freeing {
                metadata["activity.freeing"] = .string(freeing)
                logger.notice(
                    "PushWard's account holds 50 activities: deleting the bridge's oldest ended one, then creating",
                    metadata)
            } else {
                logger.warning(
                    "PushWard's account holds 50 activities and none of the bridge's can be deleted yet: the run waits",
                    metadata)
            }
        }
    }

    /// A turn whose failure needs no more than a line: what it could not write stays pending in
    /// the engine and goes with the next turn. `purpose` says what the turn does, in the line
    /// ("could not …"). A turn that found another instance leading has stepped down; nothing to say.
    func step(_ purpose: String, at now: UnixTime, _ body: (inout ServiceTurn) throws -> Void) {
        do {
            try turn(purpose, at: now, body)
        } catch is LeadLost {
            return
        } catch {
            logger.error(
                "could not save a turn's work; what it changed is written with the next turn",
                ["turn": .string(purpose), "error": .string("\(error)")])
        }
    }

    // MARK: Housekeeping

    /// Lets the core drop finished runs and idle ended cards (`BridgeEngine.forget`): storage keeps
    /// them and a delivery that needs one reads it back, so memory follows the work in flight.
    public func forgetFinished(at now: UnixTime) {
        // A follower's engine is what it loaded at start and never moves: its runs would all look
        // abandoned one day, and their release is the leader's to write (the fence refuses it).
        guard lead.allows(.write) else { return }
        // Abandoned runs were released: written now, let go of on the next pass.
        step("releasing abandoned runs", at: now) { turn in turn.engine.forget(at: now) }
    }

    /// Applies new filters (SIGHUP): deliveries from now on are judged by them.
    public func updateFilter(_ filter: DeliveryFilter) {
        engine.updateFilter(filter)
    }

    /// Takes what PushWard says the month's usage is (`GET /auth/me`) as the planner's budget,
    /// with `pushward.budget` applied: a number caps the limit, `unlimited` keeps the planner out.
    /// Logs when the level in force or the budget's standing changes.
    public func updateBudget(_ usage: PushWardUsage, at now: UnixTime) {
        let budget = configuration.pushwardBudget.budget(from: usage)
        alerts.noteUsage(usage, log: logger, at: now)
        let previous = engine.budget
        engine.budget = budget
        boards.snapshots.snapshot.notifications = (usage.notificationsUsed, usage.notificationsLimit)
        engine.noteWidgetUsage(used: usage.widgetUpdatesUsed, limit: usage.widgetUpdatesLimit)
        if let count = usage.activityCount, lead.allows(.write) {
            // Near PushWard's 50, the oldest ended activities are to be deleted: written, then sent.
            step("planning the tidying of PushWard's account", at: now) { turn in
                turn.engine.observeAccount(activityCount: count, at: now)
                turn.wakesDispatcher = true
            }
        } else {
            // Nothing to write: what the status page shows of the budget is published.
            publishSnapshot()
        }
        if previous?.limit != budget.limit || previous == nil {
            logger.notice(
                "PushWard budget read",
                [
                    "budget.used": .number(Double(budget.used)),
                    "budget.limit": budget.limit.map { .number(Double($0)) } ?? .null,
                    "budget.resets_at": budget.resetsAt.map { .string(GitHubTimestamp.format($0)) } ?? .null,
                    "budget.fidelity": .string(configuration.activity.fidelity.rawValue),
                ])
        }
    }

    /// What the status page says above the runs: a refusal a maintainer has to act on, and the
    /// pacer holding requests back.
    public nonisolated func notices() -> [String] {
        let snapshot = boards.snapshots.snapshot
        let pacing = snapshot.pacerNotice(at: Date().timeIntervalSince1970).map { [$0] } ?? []
        guard let refused = snapshot.gate.targetsRefusedAt, configuration.routing.isEnabled else {
            return pacing
        }
        return pacing + [
            "PushWard refused a routing target at \(GitHubTimestamp.format(refused)): the API key is a personal one, "
                + "which cannot route. Cards and alerts go to everyone the key reaches; use an organisation key "
                + "for routing to take effect."
        ]
    }

    /// The budget as the planner sees it, and the level it chose last (for the status page), as of
    /// the last published snapshot: read without entering the service's queue.
    public nonisolated func budgetStanding() -> (budget: PushBudget?, levelInForce: Fidelity?) {
        let snapshot = boards.snapshots.snapshot
        return (snapshot.budget, snapshot.levelInForce)
    }

    /// Gauges read at scrape time: runs and cards in flight, the gate, the budget, the database's
    /// size. Never waits on the service's queue (see `ServiceSnapshot`).
    public nonisolated func gauges(at now: UnixTime) -> [ServiceSnapshot.Gauge] {
        boards.snapshots.snapshot.gauges(
            at: now, deliveriesWaiting: deliveriesWaiting, databaseBytes: boards.databaseBytes(),
            wal: boards.checkpointer?.snapshot())
            + (configuration.githubAPI == nil ? [] : recovery.gauges()) + (leadership?.gauges(at: now) ?? [])
    }

    /// Publishes what the gauges and the status page read, after a step changed it. Sizes, the gate
    /// and the budget go at once; the two counts that take a pass over every run held go at most
    /// every `Publishing.interval`, and one publication waits for the end of the interval so the
    /// last change is never left out.
    func publishSnapshot() {
        var snapshot = boards.snapshots.snapshot
        snapshot.update(from: engine, inFlight: inFlight.cards.count)
        switch publishing.count(at: ContinuousClock.now) {
        case .now:
            snapshot.countLive(in: engine)
        case .later:
            Task { [weak self] in
                try? await Task.sleep(for: Publishing.interval)
                await self?.publishScheduledCount()
            }
        case .scheduled:
            break
        }
        boards.snapshots.snapshot = snapshot
    }

    private func publishScheduledCount() {
        publishing.scheduledCountDue()
        publishSnapshot()
    }

    /// True when the database takes a write: what `/readyz` reports.
    public func isReady() -> Bool {
        database.canWrite()
    }

    /// Runs one retention batch per table (payloads, deliveries, finished runs, ended cards, step
    /// history, then free pages) and returns whether anything is left. Each call is one job on the
    /// store's queue, so the caller calling again while work is left interleaves with ingest groups
    /// instead of holding the store for a whole pass. The pass's counts go to one log line when it
    /// is done; a failure is logged and the pass tried again at the next period.
    @discardableResult
    public func pruneRetention(at now: UnixTime) -> Bool {
        // One instance prunes what they share: the leader.
        guard lead.allows(.write) else { return false }
        do {
            let more = try database.pruneRetention(
                &retention, settings: configuration.retention, payloadRetention: configuration.payloadRetention,
                at: now)
            if !more { finishRetentionPass() }
            return more
        } catch {
            logger.warning("retention pruning failed; it runs again later", ["error": .string("\(error)")])
            finishRetentionPass()
            return false
        }
    }

    /// Logs what the pass removed (at info when it removed anything) and starts counting afresh.
    private func finishRetentionPass() {
        let pass = retention
        let metadata: [String: JSONValue] = [
            "retention.payloads": .number(Double(pass.payloads)),
            "retention.deliveries": .number(Double(pass.deliveries)),
            "retention.runs": .number(Double(pass.runs)),
            "retention.activities": .number(Double(pass.activities)),
            "retention.step_history_runs": .number(Double(pass.stepHistoryRuns)),
            "retention.recovery_requests": .number(Double(pass.recoveryRequests)),
            "retention.action_tokens": .number(Double(pass.actionTokens)),
            "retention.actions": .number(Double(pass.actions)),
            "retention.pages_released": .number(Double(pass.pagesReleased)),
        ]
        if pass.removedAnything {
            logger.info("retention pass done", metadata)
        } else {
            logger.debug("retention pass done: nothing past retention", metadata)
        }
        retention.startNext()
    }
}
