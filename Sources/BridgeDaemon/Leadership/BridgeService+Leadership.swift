import BridgeCore
import BridgeStore
import Foundation
import Synchronization

/// Thrown inside a leader's transaction when its epoch is no longer the leadership's: the
/// transaction rolls back and the instance steps down.
struct LeadLost: Error {}

/// Several instances on one PostgreSQL database (`LeadershipService` says which leads).
///
/// Every instance ingests: a follower commits each delivery with `waiting` set and notifies the
/// leader; only then does GitHub get its 2xx. The leader applies deliveries to the core (its own
/// as they arrive, the followers' as they are notified or polled), sends to PushWard and prunes.
/// Each leader write starts with the fence (`BridgeDatabase.holdsLead`), so a deposed leader's
/// late write changes nothing, and each card's request is claimed before it is sent, so a new
/// leader never crosses a request the old one had out. On SQLite none of this runs: one instance,
/// always the leader.
extension BridgeService {
    /// How long a claim on a card lasts: longer than a PushWard request may take
    /// (`sharedRequestTimeout`), so a request still out when its leader was deposed has ended
    /// before another is sent. Bounds the failover of the one card whose request was out.
    static let claimDuration: UnixTime = 5
    /// The PushWard client's timeout when several instances share the database: shorter than a
    /// single instance's 10 s, so a claimed card waits at most `claimDuration` after a failover.
    public static let sharedRequestTimeout: Double = 4

    /// Fails the caller's transaction with `LeadLost` when this instance no longer leads.
    /// Nothing on SQLite.
    func fence(_ database: BridgeDatabase) throws {
        guard leadership != nil else { return }
        guard let epoch = leaderEpoch, try database.holdsLead(epoch: epoch) else { throw LeadLost() }
    }

    /// Whether this instance may start a request now: always on SQLite; on PostgreSQL when it
    /// leads and its last heartbeat is recent enough (a leader resumed after a freeze starts
    /// nothing before its next heartbeat).
    func leadsTrusted() -> Bool {
        guard let leadership else { return true }
        guard let epoch = leaderEpoch, leadership.trustedEpoch() == epoch else { return false }
        return true
    }

    /// Whether a request planned earlier may go out now (see `leadsTrusted`), asked by the
    /// dispatcher right before each send, off the actor.
    nonisolated func mayStartRequest() -> Bool {
        leadership.map { $0.trustedEpoch() != nil } ?? true
    }

    /// A card's request planned but not sent, because the lead is no longer trusted: looked at
    /// again once it is (or by the next leader, which reads the card from the database).
    func abandon(_ planned: PlannedRequest) {
        inFlight.remove(planned.request.slug)
        engine.markDirty([planned.request.slug])
    }

    func abandon(_ planned: PlannedWidgetRequest) {
        widgetsInFlight.remove(planned.request.slug)
    }

    func abandon(_ alert: AlertRecord) {
        alerts.inFlight.remove(alert.id)
    }

    /// The cards a previous leader's claims still cover at `now`. A card whose claim ended is
    /// looked at again: the engine skipped it while claimed, as it skips a card with a request out.
    func cardsClaimedElsewhere(at now: UnixTime) -> Set<String> {
        guard !claimedElsewhere.isEmpty else { return [] }
        let ended = claimedElsewhere.filter { $0.value <= now }.keys
        if !ended.isEmpty {
            engine.markDirty(ended)
            for slug in ended { claimedElsewhere[slug] = nil }
        }
        return Set(claimedElsewhere.keys)
    }

    /// Commits claims on `slugs` before their requests are sent; false (and this instance steps
    /// down) when the fence says another leads. Always true on SQLite.
    func claim(_ slugs: [String], at now: UnixTime) -> Bool {
        guard leadership != nil, !slugs.isEmpty else { return true }
        do {
            try database.write { database in
                try fence(database)
                try database.claimCards(slugs, epoch: leaderEpoch ?? 0, until: now + Self.claimDuration)
            }
            return true
        } catch is LeadLost {
            stepDown(because: "claiming a card found another instance leading")
            return false
        } catch {
            logger.warning(
                "could not claim cards before sending; trying again at the next turn", ["error": .string("\(error)")])
            return false
        }
    }

    // MARK: Roles

    /// Hears a new role from the leadership loop (on its thread); takes it on the actor's queue,
    /// in the order the loop saw them.
    nonisolated func roleChanged(to role: LeaderLease.Role) {
        executor.queue.async { [self] in
            assumeIsolated { service in service.take(role) }
        }
    }

    private func take(_ role: LeaderLease.Role) {
        switch role {
        case .leading(let epoch):
            guard leaderEpoch != epoch else { return }
            leaderEpoch = epoch
            // What the previous leader wrote is the truth: the engine is read again from it.
            reloadFromStore()
            do {
                claimedElsewhere = try database.cardsClaimedElsewhere(epoch: epoch, at: Date().timeIntervalSince1970)
            } catch {
                logger.warning(
                    "could not read the previous leader's claims; waiting out a claim's duration",
                    ["error": .string("\(error)")])
                claimedElsewhere = Dictionary(
                    uniqueKeysWithValues: engine.sessions.keys.map {
                        ($0, Date().timeIntervalSince1970 + Self.claimDuration)
                    })
            }
            logger.notice(
                "leading: applying deliveries and sending to PushWard",
                [
                    "leader.epoch": .number(Double(epoch)),
                    "leader.claims_waited": .number(Double(claimedElsewhere.count)),
                ])
            applyWaiting()
            wakeups.signal()
        case .following:
            stepDown(because: "the leader lease is held by another instance or cannot be reached")
        }
    }

    /// Stops applying and sending; deliveries from now on are committed for the leader.
    func stepDown(because reason: String) {
        guard leaderEpoch != nil else { return }
        leaderEpoch = nil
        claimedElsewhere = [:]
        logger.notice("following: deliveries are committed for the leader to apply", ["reason": .string(reason)])
    }

    // MARK: Deliveries

    /// Commits `deliveries` for the leader, in one transaction: each first copy waiting, each
    /// redelivery counted, each malformed one recorded rejected (a 400 needs no leader).
    func queueForLeader(_ deliveries: [IncomingDelivery]) -> [IngestResult] {
        do {
            let results = try database.write { database -> [IngestResult] in
                try deliveries.map { delivery in
                    var record = DeliveryRecord(
                        id: delivery.id, hookID: delivery.hookID, event: delivery.event, action: nil,
                        receivedAt: delivery.receivedAt, repository: nil, runID: nil, runAttempt: nil,
                        outcome: .applied, reason: nil, contentType: delivery.contentType, payload: delivery.body,
                        payloadBytes: delivery.body.count)
                    switch delivery.decoded {
                    case .failure(let error):
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
                        describe(event, into: &record)
                        guard try database.insertWaiting(record, stored: delivery.storedPayload) else {
                            return IngestResult(
                                status: 200, body: ["status": "duplicate", "delivery": .string(delivery.id)])
                        }
                        return IngestResult(status: 202, body: ["status": "queued", "delivery": .string(delivery.id)])
                    }
                }
            }
            for (delivery, result) in zip(deliveries, results) {
                let outcome = result.body["status"]?.stringValue ?? result.body["error"]?.stringValue ?? "unknown"
                metrics.add(
                    "deliveries_total", labels: ["event": Metrics.eventLabel(delivery.event), "outcome": outcome])
            }
            return results
        } catch {
            logger.error(
                "could not commit deliveries for the leader; GitHub is told 503 and can redeliver them",
                ["count": .number(Double(deliveries.count)), "error": .string("\(error)")])
            return deliveries.map { _ in
                IngestResult(
                    status: 503,
                    body: [
                        "error": "store_unavailable", "detail": "the delivery could not be stored; redeliver it later",
                    ])
            }
        }
    }

    /// Has the leader apply the waiting deliveries soon, once however often it is asked meanwhile.
    nonisolated func noteWaitingDeliveries() {
        guard applyScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        executor.queue.async { [self] in
            assumeIsolated { service in service.applyWaiting() }
        }
    }

    /// Applies what followers committed, oldest first, in groups of up to 64, each in one
    /// transaction with the fence and the rows it changed. On the leader only.
    func applyWaiting() {
        applyScheduled.store(false, ordering: .releasing)
        while leadership != nil, leaderEpoch != nil {
            do {
                let applied = try database.write { database -> Int in
                    try fence(database)
                    let waiting = try database.waitingDeliveries(limit: 64)
                    for stored in waiting {
                        let delivery = IncomingDelivery(
                            id: stored.id, event: stored.event, hookID: stored.hookID, contentType: stored.contentType,
                            body: stored.payload ?? Data(), receivedAt: stored.receivedAt)
                        _ = try record(delivery, waiting: true)
                    }
                    guard !waiting.isEmpty else { return 0 }
                    let at = waiting.map(\.receivedAt).max() ?? 0
                    try database.save(engine.rows(for: engine.takeChanges(), at: at), at: at)
                    return waiting.count
                }
                guard applied > 0 else { return }
                metrics.add("deliveries_applied_from_followers_total", Double(applied))
                wakeups.signal()
                publishSnapshot()
            } catch is LeadLost {
                reloadFromStore()
                stepDown(because: "applying deliveries found another instance leading")
                return
            } catch {
                reloadFromStore()
                logger.error(
                    "could not apply deliveries other instances committed; trying again at the next poll",
                    ["error": .string("\(error)")])
                return
            }
        }
    }
}
