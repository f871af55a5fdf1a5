import BridgeCore
import Foundation

/// What several instances on one PostgreSQL database write besides the bridge's own rows: the
/// deliveries a follower commits for the leader to apply, the leader's fence (its epoch, checked in
/// every leader write) and its claims on the cards it is sending to. PostgreSQL only: an SQLite
/// file has one instance, which always leads.
extension BridgeDatabase {
    /// The channel a follower notifies once a waiting delivery committed, so the leader applies it
    /// at once instead of at its next poll.
    public static let waitingDeliveriesChannel = "pushward_bridge_deliveries"

    /// Commits `delivery` for the leader to apply (`waiting`), or counts it as a duplicate when a
    /// delivery with its id is already stored, by this instance or another: one statement decides,
    /// so two instances receiving the same redelivery both succeed. Call inside a write transaction,
    /// and `notifyWaiting` once in it when any was a first copy. Returns true for the first copy.
    public func insertWaiting(_ delivery: DeliveryRecord, stored: PayloadCompression.Stored? = nil) throws -> Bool {
        try requirePostgres("a waiting delivery")
        // A redelivery of one stored before the time-ordered ids (its row holds the id as sent,
        // which the insert's conflict cannot see): counted there, not stored and applied again.
        if try storedForms(of: delivery.id).count > 1, try recordDuplicate(delivery.id, at: delivery.receivedAt) > 0 {
            return false
        }
        let payload = stored ?? delivery.payload.map(PayloadCompression.stored)
        let first = try store.queryOne(
            """
            INSERT INTO deliveries (id, hook_id, event, action, received_at, repository, run_id, run_attempt, outcome,
                reason, content_type, payload, payload_bytes, duplicates, payload_encoding, waiting, body_digest)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, true, ?)
            ON CONFLICT (id) DO UPDATE SET duplicates = deliveries.duplicates + 1,
                last_duplicate_at = excluded.received_at
            RETURNING xmax = 0
            """,
            [
                .text(DeliveryKey.stored(delivery.id)), .string(delivery.hookID), .text(delivery.event),
                .string(delivery.action), .real(delivery.receivedAt), .string(delivery.repository),
                .int(delivery.runID),
                .int(delivery.runAttempt), .text(delivery.outcome.rawValue), .string(delivery.reason),
                .string(delivery.contentType), payload.map { .blob($0.bytes) } ?? .null,
                .integer(Int64(delivery.payloadBytes)), .text((payload?.encoding ?? .identity).rawValue),
                .string(delivery.bodyDigest),
            ]
        ) { $0.bool(0) ?? false }
        return first == true
    }

    /// Tells the leader, once the transaction commits, that deliveries wait for it (PostgreSQL
    /// delivers a notification at commit, and one per channel and payload however often sent).
    public func notifyWaiting() throws {
        try store.run("SELECT pg_notify(?, '')", [.text(Self.waitingDeliveriesChannel)])
    }

    /// The oldest deliveries waiting for the leader, with their payloads, at most `limit`.
    public func waitingDeliveries(limit: Int = 64) throws -> [DeliveryRecord] {
        guard store.dialect == .postgresql else { return [] }
        return try store.query(
            """
            SELECT id, hook_id, event, action, received_at, repository, run_id, run_attempt, outcome, reason,
                content_type, payload, payload_bytes, duplicates, payload_encoding
            FROM deliveries WHERE waiting ORDER BY received_at, id LIMIT ?
            """, [.integer(Int64(limit))], Self.deliveryRecord)
    }

    /// Records what the leader made of a waiting delivery (its outcome, reason and run) and that it
    /// no longer waits. Call in the transaction that saves what applying it changed.
    /// `keepPayload` false drops the payload the follower stored: an event the bridge does not use.
    public func markApplied(_ delivery: DeliveryRecord, keepPayload: Bool = true) throws {
        // A delivery left waiting by a build before the time-ordered ids has its id as sent.
        let forms = try storedForms(of: delivery.id, always: true)
        try store.run(
            """
            UPDATE deliveries SET waiting = false, outcome = ?, reason = ?, action = ?, repository = ?, run_id = ?,
                run_attempt = ?\(keepPayload ? "" : ", payload = NULL")
            WHERE id IN (\(Self.placeholders(forms.count))) AND waiting
            """,
            [
                .text(delivery.outcome.rawValue), .string(delivery.reason), .string(delivery.action),
                .string(delivery.repository), .int(delivery.runID), .int(delivery.runAttempt),
            ] + forms.map { .text($0) })
    }

    /// The fence of a leader write: true when `epoch` is still the leadership's, and then the row is
    /// share-locked until the transaction ends, so no takeover (which updates it) commits in
    /// between. Call first in every leader transaction; on false, roll back and step down.
    public func holdsLead(epoch: Int64) throws -> Bool {
        try store.queryOne("SELECT epoch FROM leadership FOR SHARE", []) { $0.int64(0) } == .some(epoch)
    }

    /// Claims `slugs` for requests about to be sent under `epoch`, until `expiry`. Claims of the
    /// same epoch are renewed; another epoch's are taken over (the caller already left those alone
    /// while unexpired).
    public func claimCards(_ slugs: [String], epoch: Int64, until expiry: UnixTime) throws {
        for slug in slugs {
            try store.run(
                """
                INSERT INTO card_claims (slug, epoch, expires_at) VALUES (?, ?, ?)
                ON CONFLICT (slug) DO UPDATE SET epoch = excluded.epoch, expires_at = excluded.expires_at
                """, [.text(slug), .integer(epoch), .real(expiry)])
        }
    }

    /// Lets go of the claim on `slug` once its request came back.
    public func releaseClaim(_ slug: String, epoch: Int64) throws {
        try store.run("DELETE FROM card_claims WHERE slug = ? AND epoch = ?", [.text(slug), .integer(epoch)])
    }

    /// The cards another epoch's leader claimed and whose claims have not expired at `now`: the
    /// requests a previous leader may still have out, each with when its claim ends.
    public func cardsClaimedElsewhere(epoch: Int64, at now: UnixTime) throws -> [String: UnixTime] {
        guard store.dialect == .postgresql else { return [:] }
        let rows = try store.query(
            "SELECT slug, expires_at FROM card_claims WHERE epoch != ? AND expires_at > ?",
            [.integer(epoch), .real(now)]
        ) { ($0.string(0) ?? "", $0.double(1) ?? 0) }
        return Dictionary(rows, uniquingKeysWith: max)
    }

    /// Who leads, as the leadership row says: read by every instance's status page, so an operator
    /// on a follower sees which instance sends. Nil on SQLite and before any instance led.
    public func leader() throws -> LeaderRecord? {
        guard store.dialect == .postgresql else { return nil }
        return try store.queryOne("SELECT holder, epoch, since, heartbeat_at FROM leadership", []) {
            LeaderRecord(
                holder: $0.string(0) ?? "", epoch: $0.int64(1) ?? 0, since: $0.double(2) ?? 0,
                heartbeatAt: $0.double(3) ?? 0)
        }
    }

    /// Whether this database is PostgreSQL, where several instances share it.
    public var isShared: Bool { store.dialect == .postgresql }

    private func requirePostgres(_ what: String) throws {
        guard store.dialect == .postgresql else {
            throw SQLiteError.misuse("\(what) is for several instances on PostgreSQL; \(path) is SQLite")
        }
    }
}
