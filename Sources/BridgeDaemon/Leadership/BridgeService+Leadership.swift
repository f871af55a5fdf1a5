import BridgeCore
import BridgeStore
import Foundation

/// Thrown inside a leader's transaction when its epoch is no longer the leadership's: the
/// transaction rolls back and the instance steps down.
struct LeadLost: Error {}

/// Several instances on one PostgreSQL database (`LeadershipService` says which leads).
///
/// Every instance ingests: it commits each delivery with `waiting` set and notifies the leader;
/// only then does GitHub get its 2xx (the leader answers the same way, so no answer waits for a
/// run's rows to be written). The leader applies the waiting deliveries to the core, oldest first,
/// as they are notified or polled, sends to PushWard and prunes.
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

    /// Whether a request planned earlier may go out now (`LeaderState.allows`, `.send`), asked
    /// off the actor by the loops that decide whether to start a round of work.
    nonisolated func mayStartRequest() -> Bool {
        leaderFence.permits()
    }

    /// A card's request planned but not sent, because the lead is no longer trusted: looked at
    /// again once it is (or by the next leader, which reads the card from the database).
    func abandon(_ planned: PlannedRequest) {
        inFlight.answered(card: planned.request.slug)
        engine.markDirty([planned.request.slug])
    }

    func abandon(_ planned: PlannedWidgetRequest) {
        inFlight.answered(widget: planned.request.slug)
    }

    func abandon(_ alert: AlertRecord) {
        alerts.outbox.finished(alert.id)
    }

    /// The cards a previous leader's claims still cover at `now`. A card whose claim ended is
    /// looked at again: the engine skipped it while claimed, as it skips a card with a request out.
    func cardsClaimedElsewhere(at now: UnixTime) -> Set<String> {
        let ended = lead.endClaims(at: now)
        if !ended.isEmpty { engine.markDirty(ended) }
        return Set(lead.claimedElsewhere.keys)
    }

    /// Claims `slugs` in the turn that plans their requests, so they are committed before any is
    /// sent. Nothing to claim on SQLite.
    func claim(_ slugs: [String], in turn: borrowing ServiceTurn) throws {
        guard lead.isShared, !slugs.isEmpty else { return }
        try turn.database.claimCards(slugs, epoch: lead.epoch ?? 0, until: turn.now + Self.claimDuration)
    }

    // MARK: Roles

    /// Hears a new role from the leadership loop (on its thread); takes it on the actor's queue,
    /// in the order the loop saw them.
    nonisolated func roleChanged(to role: LeaderLease.Role) {
        queue.async { [self] in
            assumeIsolated { service in service.take(role) }
        }
    }

    private func take(_ role: LeaderLease.Role) {
        switch role {
        case .leading(let epoch):
            guard lead.take(epoch) else { return }
            // What the previous leader wrote is the truth: the engine is read again from it.
            reloadFromStore()
            do {
                lead.waitOut(try database.cardsClaimedElsewhere(epoch: epoch, at: Date().timeIntervalSince1970))
            } catch {
                logger.warning(
                    "could not read the previous leader's claims; waiting out a claim's duration",
                    ["error": .string("\(error)")])
                lead.waitOut(
                    Dictionary(
                        uniqueKeysWithValues: engine.sessions.keys.map {
                            ($0, Date().timeIntervalSince1970 + Self.claimDuration)
                        }))
            }
            logger.notice(
                "leading: applying deliveries and sending to PushWard",
                [
                    "leader.epoch": .number(Double(epoch)),
                    "leader.claims_waited": .number(Double(lead.claimedElsewhere.count)),
                ])
            applyWaiting()
            wakeups.signal()
        case .following:
            stepDown(because: "the leader lease is held by another instance or cannot be reached")
        }
    }

    /// Stops applying and sending; deliveries from now on are committed for the leader.
    func stepDown(because reason: String) {
        guard lead.stepDown() else { return }
        logger.notice("following: deliveries are committed for the leader to apply", ["reason": .string(reason)])
    }

    // MARK: Deliveries

    /// Commits `deliveries` for the leader on this actor's connection: for a delivery that came
    /// here (a lookup's observations, a group that found another instance leading).
    func queueForLeader(_ deliveries: [IncomingDelivery]) -> [IngestResult] {
        WaitingDeliveryCommitter.commit(deliveries, to: database, metrics: metrics, logger: logger)
    }

    /// Has the leader apply the waiting deliveries soon, once however often it is asked meanwhile.
    nonisolated func noteWaitingDeliveries() {
        guard queue.scheduleApply() else { return }
        queue.async { [self] in
            assumeIsolated { service in service.applyWaiting() }
        }
    }

    /// Deliveries applied per transaction: a bigger group shares one commit among more, a smaller
    /// one lets the answers queued meanwhile go sooner.
    static let applyGroup = 64

    /// Applies what the instances committed, oldest first: one group of up to `applyGroup` in one
    /// transaction with the fence and the rows it changed, then, when more wait, another turn
    /// behind whatever else is queued on the actor (the next group of answers, a dispatcher turn),
    /// so a backlog never holds the answers up. On the leader only.
    func applyWaiting() {
        queue.applyStarted()
        guard lead.isShared, lead.allows(.write) else { return }
        do {
            let applied = try turn("applying deliveries", at: Date().timeIntervalSince1970) { turn throws -> Int in
                let waiting = try turn.database.waitingDeliveries(limit: Self.applyGroup)
                for stored in waiting {
                    let delivery = IncomingDelivery(
                        id: stored.id, event: stored.event, hookID: stored.hookID, contentType: stored.contentType,
                        body: stored.payload ?? Data(), receivedAt: stored.receivedAt)
                    _ = try recorder.record(delivery, waiting: true, in: &turn)
                }
                turn.wakesDispatcher = !waiting.isEmpty
                if let last = waiting.map(\.receivedAt).max() { turn.now = last }
                return waiting.count
            }
            guard applied > 0 else { return }
            logLevelChange()
            metrics.add("deliveries_applied_total", Double(applied))
            metrics.observe("ingest_batch_size", Double(applied), buckets: Metrics.batchBuckets)
            if applied == Self.applyGroup { noteWaitingDeliveries() }
        } catch is LeadLost {
            reloadFromStore()
        } catch {
            reloadFromStore()
            logger.error(
                "could not apply committed deliveries; trying again at the next poll",
                ["error": .string("\(error)")])
        }
    }
}
