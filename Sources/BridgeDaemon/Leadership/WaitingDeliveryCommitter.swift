import BridgeCore
import BridgeStore
import Foundation

/// Several instances on PostgreSQL: commits deliveries for the leader to apply, on a connection and
/// a queue of its own, and answers them.
///
/// Every instance, the leader included, answers GitHub once a delivery's row is committed with
/// `waiting` set: one `INSERT … ON CONFLICT` a delivery and one `NOTIFY` a group, which the
/// leader's listener hears (its own too) and has it apply. Applying (the run's rows, a round trip
/// to the server each) happens on the leader's store queue afterwards.
/// Kept off that queue and its connection, answers never wait behind an apply: with both on one
/// queue an instance answered about 700 deliveries a second and its p99 at 1,000/s passed 4 s
/// (`make bench-ha`, docs/high-availability.md).
final class WaitingDeliveryCommitter: @unchecked Sendable {
    /// Used on `queue` only.
    private let database: BridgeDatabase
    private let queue = DispatchQueue(label: "pushward-bridge.answers")
    private let ingestQueue = IngestQueue(maxBatch: 64)
    private let metrics: Metrics
    private let logger: Logger
    /// How far back a body seen before makes a duplicate (`payload_retention`).
    private let bodyMemory: Double

    init(
        database: BridgeDatabase, metrics: Metrics, logger: Logger,
        bodyMemory: Double = IncomingDelivery.defaultBodyMemory
    ) {
        self.database = database
        self.metrics = metrics
        self.logger = logger
        self.bodyMemory = bodyMemory
    }

    /// Queues `delivery`; `completion` gets the answer after the group's commit.
    func submit(_ delivery: IncomingDelivery, completion: @escaping @Sendable (IngestResult) -> Void) {
        if ingestQueue.append(IngestQueue.Ticket(delivery: delivery, completion: completion)) { scheduleDrain() }
    }

    /// Deliveries handed over and not answered yet.
    var waiting: Int { ingestQueue.waiting }

    private func scheduleDrain() {
        queue.async { [self] in drain() }
    }

    private func drain() {
        let batch = ingestQueue.take()
        guard !batch.isEmpty else { return }
        let results = Self.commit(
            batch.map(\.delivery), to: database, metrics: metrics, logger: logger, bodyMemory: bodyMemory)
        for (ticket, result) in zip(batch, results) { ingestQueue.answer(ticket, with: result) }
        scheduleDrain()
    }

    /// Commits `deliveries` for the leader in one transaction: each first copy waiting, each
    /// redelivery counted as a duplicate, each malformed one recorded rejected (a 400 needs no
    /// leader); then one notification, so the leader applies them at once. When the group's commit
    /// fails, each delivery is tried again alone (as `BridgeService.ingest` does), so only one the
    /// store cannot take gets a 503, which GitHub redelivers.
    static func commit(
        _ deliveries: [IncomingDelivery], to database: BridgeDatabase, metrics: Metrics, logger: Logger,
        bodyMemory: Double = IncomingDelivery.defaultBodyMemory
    ) -> [IngestResult] {
        guard !deliveries.isEmpty else { return [] }
        do {
            let results = try database.write { database -> [IngestResult] in
                let results = try deliveries.map { try commit($0, to: database, bodyMemory: bodyMemory) }
                if results.contains(where: { $0.status == 202 }) { try database.notifyWaiting() }
                return results
            }
            metrics.countAnswers(deliveries, results)
            return results
        } catch {
            if deliveries.count > 1 {
                logger.warning(
                    "could not commit a group of deliveries for the leader; committing each alone",
                    ["count": .number(Double(deliveries.count)), "error": .string("\(error)")])
                return deliveries.map {
                    commit([$0], to: database, metrics: metrics, logger: logger, bodyMemory: bodyMemory)[0]
                }
            }
            logger.error(
                "could not commit a delivery for the leader; GitHub is told 503 and can redeliver it",
                ["github.delivery": .string(deliveries[0].id), "error": .string("\(error)")])
            return deliveries.map { _ in
                IngestResult(
                    status: 503,
                    body: [
                        "error": "store_unavailable", "detail": "the delivery could not be stored; redeliver it later",
                    ])
            }
        }
    }

    private static func commit(_ delivery: IncomingDelivery, to database: BridgeDatabase, bodyMemory: Double) throws
        -> IngestResult
    {
        // The same signed body under another id (a captured delivery replayed): a duplicate.
        if let original = try database.delivery(withBody: delivery.bodyDigest, since: delivery.receivedAt - bodyMemory),
            original != delivery.id
        {
            try database.recordDuplicate(original, at: delivery.receivedAt)
            return IncomingDelivery.duplicate(delivery.id, of: original)
        }
        var record = DeliveryRecord(
            id: delivery.id, hookID: delivery.hookID, event: delivery.event, action: nil,
            receivedAt: delivery.receivedAt, repository: nil, runID: nil, runAttempt: nil,
            outcome: .applied, reason: nil, contentType: delivery.contentType, payload: delivery.body,
            payloadBytes: delivery.body.count)
        record.bodyDigest = delivery.bodyDigest
        switch delivery.decoded {
        case .failure(let error):
            // A malformed delivery is stored as rejected, not waiting; its redelivery (the same id)
            // is a duplicate like any other, where a second insert would fail the whole group.
            if try database.hasDelivery(delivery.id) {
                try database.recordDuplicate(delivery.id, at: delivery.receivedAt)
                return IngestResult(status: 200, body: ["status": "duplicate", "delivery": .string(delivery.id)])
            }
            record.outcome = .rejected
            record.reason = error.description
            try database.insert(record, stored: delivery.storedPayload)
            return IngestResult(
                status: 400,
                body: [
                    "error": "malformed_payload", "detail": .string(error.description),
                    "delivery": .string(delivery.id),
                ])
        case .success(let event):
            DeliveryRecorder.describe(event, into: &record)
            guard try database.insertWaiting(record, stored: delivery.storedPayload) else {
                return IngestResult(status: 200, body: ["status": "duplicate", "delivery": .string(delivery.id)])
            }
            return IngestResult(status: 202, body: ["status": "queued", "delivery": .string(delivery.id)])
        }
    }
}
