import BridgeCore
import BridgeStore
import Foundation

/// Ingest: each verified delivery recorded in `deliveries` and applied to the core, inside the
/// turn's transaction, with the answer the sender gets once the turn commits. A duplicate (the same
/// id, or the same signed body under a new id: a captured delivery replayed) is counted on the
/// first and changes nothing; a malformed one is kept with its reason and answered 400.
struct DeliveryRecorder: Sendable {
    /// The lines of signed deliveries that are malformed or ignored: one a second of each, the rest
    /// counted, since a sender holding the secret (or replaying what it captured under new ids)
    /// decides how many it sends. Each is also recorded with its reason in `deliveries`.
    let deliveryLog: RefusalLog
    /// How far back a body is compared for a replay: as long as payloads are kept.
    let payloadRetention: Double

    init(logger: Logger, metrics: Metrics, payloadRetention: Int) {
        deliveryLog = RefusalLog(logger: logger, counters: metrics, kinds: ["malformed_payload", "ignored_delivery"])
        self.payloadRetention = Double(payloadRetention)
    }

    /// Records one delivery and applies it to the core, inside the caller's transaction; the
    /// runs and cards it changed are written by the caller once the whole group is applied.
    /// `waiting`: the delivery is stored already, committed by a follower for this leader, and its
    /// row gets the outcome instead of a new row.
    func record(_ delivery: IncomingDelivery, waiting: Bool = false, in turn: inout ServiceTurn) throws -> IngestResult
    {
        let database = turn.database
        let logger = turn.log
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
                withBody: delivery.bodyDigest, since: delivery.receivedAt - payloadRetention)
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
        let outcome = try turn.engine.receive(event, at: delivery.receivedAt, history: turn.history)
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

    /// Deliveries applied per turn on the leader: a bigger group shares one commit among more, a
    /// smaller one lets the answers queued meanwhile go sooner.
    static let applyGroup = 64

    /// Applies, in the leader's turn, up to `applyGroup` of the deliveries the instances committed,
    /// oldest first (`WaitingDeliveryCommitter`); how many. The turn's rows are dated by the last.
    func applyWaiting(in turn: inout ServiceTurn) throws -> Int {
        let waiting = try turn.database.waitingDeliveries(limit: Self.applyGroup)
        for stored in waiting {
            let delivery = IncomingDelivery(
                id: stored.id, event: stored.event, hookID: stored.hookID, contentType: stored.contentType,
                body: stored.payload ?? Data(), receivedAt: stored.receivedAt)
            _ = try record(delivery, waiting: true, in: &turn)
        }
        if let last = waiting.map(\.receivedAt).max() { turn.now = last }
        turn.wakesDispatcher = !waiting.isEmpty
        return waiting.count
    }

    /// The answer to a delivery the store could not take, even alone: a 503, counted and said, so
    /// GitHub can redeliver it.
    static func unstored(_ delivery: IncomingDelivery, error: any Error, log: Logger, metrics: Metrics)
        -> IngestResult
    {
        metrics.add(
            "deliveries_total", labels: ["event": Metrics.eventLabel(delivery.event), "outcome": "store_unavailable"])
        log.error(
            "could not commit a delivery; GitHub is told 503 and can redeliver it",
            [
                "github.delivery": .string(delivery.id), "github.event": .string(delivery.event),
                "error": .string("\(error)"),
            ])
        return IngestResult(
            status: 503,
            body: ["error": "store_unavailable", "detail": "the delivery could not be stored; redeliver it later"])
    }
}
