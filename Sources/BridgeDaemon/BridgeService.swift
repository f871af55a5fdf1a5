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
    /// The alert sender's state (`AlertOutbox`, `BridgeService+Alerts.swift`).
    var alerts: AlertOutbox
    /// Cards and widgets with a request out (`InFlight`).
    var inFlight = InFlight()
    /// When the snapshot's counts were last taken, and the budget level last logged (`Publishing`).
    private var publishing = Publishing()
    /// The retention pass under way: what it removed so far, and where the step-history scan stands.
    private var retention = RetentionPass()
    /// Set when a failed commit could not be followed by a reload from the store.
    private var needsReload = false

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
        self.alerts = AlertOutbox(nextDue: settings.sendsAlerts ? ((try? database.nextAlertDue()) ?? nil) : nil)
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
    nonisolated var deliveryLog: RefusalLog { outlets.deliveryLog }
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
            var plannedAlerts = false
            let results = try database.write { database throws -> [IngestResult] in
                try lead.fence(database)
                var results: [IngestResult] = []
                results.reserveCapacity(deliveries.count)
                for delivery in deliveries { results.append(try record(delivery)) }
                // One write per run and card the group touched, as they stand after all of it.
                let at = deliveries.map(\.receivedAt).max() ?? 0
                let rows = engine.rows(for: engine.takeChanges(), at: at)
                try database.save(rows, at: at)
                plannedAlerts = !rows.alerts.isEmpty
                return results
            }
            if plannedAlerts { noteAlertsPlanned(at: deliveries.map(\.receivedAt).max() ?? 0) }
            logLevelChange()
            metrics.observe("ingest_batch_size", Double(deliveries.count), buckets: Metrics.batchBuckets)
            if results.contains(where: { $0.status == 202 }) { wakeups.signal() }
            metrics.countAnswers(deliveries, results)
            publishSnapshot()
            return results
        } catch is LeadLost {
            stepDown(because: "a delivery's commit found another instance leading")
            return queueForLeader(deliveries)
        } catch {
            // The transaction rolled back; the store is the truth. Reloading from it (rather than
            // copying the whole engine before every group, which costs a copy of every run) puts
            // the core back where the store is.
            reloadFromStore()
            publishSnapshot()
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

    /// Records one delivery and applies it to the core, inside the caller's transaction; the
    /// runs and cards it changed are written by the caller once the whole group is applied.
    /// `waiting`: the delivery is stored already, committed by a follower for this leader, and its
    /// row gets the outcome instead of a new row.
    func record(_ delivery: IncomingDelivery, waiting: Bool = false) throws -> IngestResult {
        let database = database
        let keep: (DeliveryRecord) throws -> Void =
            waiting
            ? { try database.markApplied($0) } : { try database.insert($0, stored: delivery.storedPayload) }
        if !waiting, try database.hasDelivery(delivery.id) {
            try database.recordDuplicate(delivery.id, at: delivery.receivedAt)
            return IncomingDelivery.duplicate(delivery.id)
        }
        // The same signed body under another id: a captured delivery replayed, counted on the first.
        if !waiting,
            let original = try database.delivery(
                withBody: delivery.bodyDigest, since: delivery.receivedAt - Double(configuration.payloadRetention))
        {
            try database.recordDuplicate(original, at: delivery.receivedAt)
            deliveryLog.say(
                "replayed_body", .warning,
                "a delivery repeats the signed body of an earlier one: answered as a duplicate",
                ["github.delivery": .string(delivery.id), "github.original_delivery": .string(original)],
                at: delivery.receivedAt)
            return IncomingDelivery.duplicate(delivery.id, of: original)
        }
        // Built only for a line that is written.
        var metadata: [String: JSONValue] {
            ["github.delivery": .string(delivery.id), "github.event": .string(delivery.event)]
        }
        var record = DeliveryRecord(
            id: delivery.id, hookID: delivery.hookID, event: delivery.event, action: nil,
            receivedAt: delivery.receivedAt, repository: nil, runID: nil, runAttempt: nil, outcome: .applied,
            reason: nil, contentType: delivery.contentType, payload: delivery.body, payloadBytes: delivery.body.count)
        record.bodyDigest = delivery.bodyDigest
        let event: WebhookEvent
        switch delivery.decoded {
        case .success(let decoded):
            event = decoded
        case .failure(let error):
            record.outcome = .rejected
            record.reason = error.description
            try keep(record)
            deliveryLog.say(
                "malformed_payload", .warning, "rejected a malformed delivery",
                metadata.merging(["reason": .string(error.description)]) { $1 }, at: delivery.receivedAt)
            return IngestResult(
                status: 400,
                body: [
                    "error": "malformed_payload", "detail": .string(error.description),
                    "delivery": .string(delivery.id),
                ])
        }
        Self.describe(event, into: &record)
        let outcome = try engine.receive(event, at: delivery.receivedAt, history: StoreHistory(database))
        switch outcome {
        case .applied(let key):
            try keep(record)
            // Checked first: building the line's metadata costs more than the rest of the answer.
            if logger.minimumLevel <= .debug {
                logger.debug(
                    "applied a delivery",
                    metadata.merging([
                        "github.repository": .string(key.repository), "run.id": .number(Double(key.runID)),
                        "run.attempt": .number(Double(key.attempt)),
                    ]) { $1 })
            }
            return IngestResult(
                status: 202,
                body: [
                    "status": "accepted", "delivery": .string(delivery.id), "repository": .string(key.repository),
                    "run_id": .number(Double(key.runID)), "run_attempt": .number(Double(key.attempt)),
                ])
        case .ignored(let reason):
            record.outcome = .ignored
            record.reason = reason
            if case .unsupported = event {
                // An event the bridge does not use: its headers and the reason are kept, never its
                // payload (a hook that sends everything would otherwise store every push).
                record.payload = nil
                try waiting ? database.markApplied(record, keepPayload: false) : database.insert(record, stored: nil)
            } else {
                try keep(record)
            }
            deliveryLog.say(
                "ignored_delivery", .info, "ignored a delivery", metadata.merging(["reason": .string(reason)]) { $1 },
                at: delivery.receivedAt)
            return IngestResult(
                status: 200, body: ["status": "ignored", "reason": .string(reason), "delivery": .string(delivery.id)])
        case .ping(let warning):
            record.outcome = .ignored
            record.reason = warning.map { "ping: \($0)" } ?? "ping"
            try keep(record)
            if let warning {
                logger.warning(
                    "the webhook is missing events the bridge needs",
                    metadata.merging(["warning": .string(warning)]) { $1 })
            } else {
                logger.info("ping received: the webhook sends what the bridge needs", metadata)
            }
            var body: [String: JSONValue] = ["status": "pong", "delivery": .string(delivery.id)]
            if let warning { body["warning"] = .string(warning) }
            return IngestResult(status: 200, body: .object(body))
        }
    }

    static func describe(_ event: WebhookEvent, into record: inout DeliveryRecord) {
        switch event {
        case .workflowRun(let delivery):
            record.action = delivery.action
            record.repository = delivery.repository.fullName
            record.runID = delivery.run.id
            record.runAttempt = delivery.run.runAttempt
        case .workflowJob(let delivery):
            record.action = delivery.action
            record.repository = delivery.repository.fullName
            record.runID = delivery.job.runID
            record.runAttempt = delivery.job.runAttempt
        case .ping(let ping):
            record.repository = ping.repository?.fullName
        case .unsupported:
            break
        }
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

    /// Moves time on (completions by grace) and returns every request due now, one per card and
    /// none for a card whose previous request is still out: ten changes during one request become
    /// one follow-up, computed from the latest state when it is sent.
    public func dueRequests(at now: UnixTime) -> [PlannedRequest] {
        guard lead.allows(.start) else { return [] }
        let due = engine.dueRequests(at: now, inFlight: inFlight.cards.union(cardsClaimedElsewhere(at: now)))
        countPacerHeld()
        guard claim(due.map(\.request.slug), at: now) else { return [] }
        inFlight.send(cards: due.map(\.request.slug))
        planAlertsOfFinishedRuns()
        persistChanges(at: now)
        publishSnapshot()
        return due
    }

    /// When something next falls due, for the dispatcher's sleep; nil when nothing is pending.
    public func nextWakeup(after now: UnixTime) -> UnixTime? {
        [
            engine.nextWakeup(after: now), alerts.nextWakeup, engine.nextWidgetWakeup(after: now),
            lead.nextClaimEnd,
        ]
        .compactMap { $0 }.min()
    }

    /// Records what became of a request: a 2xx moves the card on; anything else leaves the
    /// acknowledged content as it was, so the next attempt is computed against what PushWard holds.
    public func complete(_ planned: PlannedRequest, answer: PushWardAnswer, dryRun: Bool, at now: UnixTime) {
        inFlight.answered(card: planned.request.slug)
        let quotaWasExhausted = engine.gate.quotaExhausted(at: now)
        let targetsWereRefused = engine.gate.targetsRefusedAt != nil
        let effect = engine.handle(answer, for: planned, at: now, jitter: Double.random(in: 0...1))
        if case .quotaExhausted = effect { usageRefresh.signal() }
        // The account is full: read what it holds, so the oldest ended activities are tidied.
        if case .roomNeeded = effect { usageRefresh.signal() }
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
        report(effect, planned: planned, quotaWasExhausted: quotaWasExhausted, targetsWereRefused: targetsWereRefused)
        metrics.add(
            "pushward_requests_total",
            labels: ["kind": planned.kind.rawValue, "status": status.map(String.init) ?? "none"])
        if case .willRetry = effect { metrics.add("pushward_retries_total") }
        wakeups.signal()
        record(planned, status: status, outcome: dryRun ? "dry-run" : Self.outcome(effect), detail: detail, at: now)
        publishSnapshot()
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
        for (tier, count) in engine.takePacerHeld() where count > 0 {
            metrics.add("pushward_requests_paced_total", Double(count), labels: ["tier": tier.label])
        }
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
        let until = engine.noteRateLimited(retryAfter: retryAfter, at: now)
        logger.warning("PushWard rate limit reached; every request waits", ["push.resume_at": .number(until)])
        persistChanges(at: now)
        wakeups.signal()
    }

    /// One log line per decision, at the level a person should see it.
    private func report(
        _ effect: AnswerEffect, planned: PlannedRequest, quotaWasExhausted: Bool, targetsWereRefused: Bool
    ) {
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
            if !targetsWereRefused { sayTargetsRefused(metadata) }
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

    /// The one time a refused routing target is said, whichever request (a create, an alert) met
    /// it first.
    func sayTargetsRefused(_ metadata: [String: JSONValue]) {
        metrics.add("routing_targets_refused_total")
        logger.error(
            "PushWard refused a routing target (a personal key cannot route; use an organisation key): cards and alerts now go without one, to everyone the key reaches",
            metadata)
    }

    private func record(_ planned: PlannedRequest, status: Int?, outcome: String, detail: String?, at now: UnixTime) {
        do {
            try database.write { database in
                try lead.fence(database)
                if let epoch = lead.claimEpoch {
                    try database.releaseClaim(planned.request.slug, epoch: epoch)
                }
                try database.insert(
                    RequestRecord(
                        slug: planned.request.slug, run: planned.run, kind: planned.kind.rawValue,
                        method: planned.request.method.rawValue, path: planned.request.path,
                        body: planned.request.body.canonicalString, sentAt: now, status: status, outcome: outcome,
                        detail: detail))
                try database.save(engine.rows(for: engine.takeChanges(), at: now), at: now)
            }
        } catch {
            logger.error(
                "could not record a push; the card is written again with the next change",
                ["activity.slug": .string(planned.request.slug), "error": .string("\(error)")])
        }
    }

    /// Writes what the engine changed outside a delivery or a request's answer (a timer, an
    /// alert's answer).
    func persistChanges(at now: UnixTime) {
        let changes = engine.takeChanges()
        guard !changes.isEmpty else { return }
        do {
            let rows = engine.rows(for: changes, at: now)
            try database.write { database in
                try lead.fence(database)
                try database.save(rows, at: now)
            }
            if !rows.alerts.isEmpty { noteAlertsPlanned(at: now) }
        } catch {
            engine.changes = changes
            logger.error("could not save timer changes; retrying on the next tick", ["error": .string("\(error)")])
        }
    }

    // MARK: Housekeeping

    /// Lets the core drop finished runs and idle ended cards (`BridgeEngine.forget`): storage keeps
    /// them and a delivery that needs one reads it back, so memory follows the work in flight.
    public func forgetFinished(at now: UnixTime) {
        // A follower's engine is what it loaded at start and never moves: its runs would all look
        // abandoned one day, and their release is the leader's to write (the fence refuses it).
        guard lead.allows(.write) else { return }
        engine.forget(at: now)
        // Abandoned runs were released: written now, let go of on the next pass.
        persistChanges(at: now)
        publishSnapshot()
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
        noteNotificationUsage(usage, at: now)
        let previous = engine.budget
        engine.budget = budget
        boards.snapshots.snapshot.notifications = (usage.notificationsUsed, usage.notificationsLimit)
        engine.noteWidgetUsage(used: usage.widgetUpdatesUsed, limit: usage.widgetUpdatesLimit)
        if let count = usage.activityCount, lead.allows(.write) {
            // Near PushWard's 50, the oldest ended activities are to be deleted: written, then sent.
            engine.observeAccount(activityCount: count, at: now)
            persistChanges(at: now)
            wakeups.signal()
        }
        publishSnapshot()
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
