import BridgeCore
import Foundation

/// One redelivery the recovery sweep asked GitHub for (`recovery_requests`).
public struct RecoveryRequest: Sendable, Equatable {
    public var guid: String
    public var hook: String
    /// GitHub's id of the attempt asked for again.
    public var attemptID: Int
    public var event: String
    public var requests: Int
    public var firstRequestedAt: UnixTime
    public var lastRequestedAt: UnixTime
    /// When the sweep gave up on it (asked for the most times, never arrived); nil while it may come.
    public var givenUpAt: UnixTime?
}

/// `recovery_hooks` and `recovery_requests`: how far each hook's log was swept, and what was asked
/// for again. Every read is on a primary key (a hook, a GUID) or `recovery_requests_by_age`.
extension BridgeDatabase {
    /// The time up to which `hook`'s delivery log was examined and resolved; nil before its first sweep.
    public func examinedThrough(hook: String) throws -> UnixTime? {
        try store.queryOne("SELECT examined_through FROM recovery_hooks WHERE hook = ?", [.text(hook)]) {
            $0.double(0) ?? 0
        }
    }

    /// Records a finished sweep of `hook`.
    public func recordSweep(hook: String, examinedThrough: UnixTime, at now: UnixTime) throws {
        try store.run(
            """
            INSERT INTO recovery_hooks (hook, examined_through, swept_at) VALUES (?, ?, ?)
            ON CONFLICT (hook) DO UPDATE SET examined_through = excluded.examined_through, swept_at = excluded.swept_at
            """, [.text(hook), .real(examinedThrough), .real(now)])
    }

    /// Of `guids`, those the store has as deliveries.
    public func storedDeliveries(_ guids: some Sequence<String>) throws -> Set<String> {
        var stored: Set<String> = []
        for guid in guids where try hasDelivery(guid) { stored.insert(guid) }
        return stored
    }

    /// What was asked of each of `guids` before (those never asked for are absent).
    public func recoveryRequests(_ guids: some Sequence<String>) throws -> [String: RecoveryRequest] {
        var found: [String: RecoveryRequest] = [:]
        for guid in guids {
            let request = try store.queryOne(
                """
                SELECT guid, hook, attempt_id, event, requests, first_requested_at, last_requested_at, given_up_at
                FROM recovery_requests WHERE guid = ?
                """, [.text(guid)], Self.recoveryRequest)
            if let request { found[guid] = request }
        }
        return found
    }

    /// The most recent requests, newest first: what the status page and `/api/recovery` show.
    public func recentRecoveryRequests(limit: Int = 20) throws -> [RecoveryRequest] {
        try store.query(
            """
            SELECT guid, hook, attempt_id, event, requests, first_requested_at, last_requested_at, given_up_at
            FROM recovery_requests ORDER BY last_requested_at DESC LIMIT ?
            """, [.integer(Int64(limit))], Self.recoveryRequest)
    }

    /// Counts one more request for `delivery`'s GUID, before it is sent: a request whose answer
    /// is lost still counts towards `RedeliveryPlan.maxRequests`.
    public func recordRecoveryRequest(_ delivery: HookDelivery, hook: String, at now: UnixTime) throws {
        try store.run(
            """
            INSERT INTO recovery_requests (guid, hook, attempt_id, event, requests, first_requested_at, last_requested_at)
            VALUES (?, ?, ?, ?, 1, ?, ?)
            ON CONFLICT (guid) DO UPDATE SET requests = recovery_requests.requests + 1, attempt_id = excluded.attempt_id,
                last_requested_at = excluded.last_requested_at
            """,
            [.text(delivery.guid), .text(hook), .int(delivery.id), .text(delivery.event), .real(now), .real(now)])
    }

    /// Records that the sweep gave up on `guid` (said once, then left alone).
    public func recordGivenUp(_ guid: String, at now: UnixTime) throws {
        try store.run(
            "UPDATE recovery_requests SET given_up_at = ? WHERE guid = ? AND given_up_at IS NULL",
            [.real(now), .text(guid)])
    }

    static func recoveryRequest(_ row: StoreRow) -> RecoveryRequest {
        RecoveryRequest(
            guid: row.string(0) ?? "", hook: row.string(1) ?? "", attemptID: row.int(2) ?? 0,
            event: row.string(3) ?? "",
            requests: row.int(4) ?? 0, firstRequestedAt: row.double(5) ?? 0, lastRequestedAt: row.double(6) ?? 0,
            givenUpAt: row.double(7))
    }
}
