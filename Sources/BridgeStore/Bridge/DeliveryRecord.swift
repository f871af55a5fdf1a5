import BridgeCore
import Foundation

/// One row of `deliveries`: what arrived, when, and what became of it.
public struct DeliveryRecord: Sendable, Equatable {
    public enum Outcome: String, Sendable, Codable {
        /// Verified, decoded and applied to run state.
        case applied
        /// Deliberately not acted on (unsupported event, filtered out, ping); `reason` says why.
        case ignored
        /// Verified but unusable (malformed body); `reason` says what was wrong.
        case rejected
    }

    /// `X-GitHub-Delivery`; a redelivery repeats it.
    public var id: String
    public var hookID: String?
    public var event: String
    public var action: String?
    public var receivedAt: UnixTime
    public var repository: String?
    public var runID: Int?
    public var runAttempt: Int?
    public var outcome: Outcome
    public var reason: String?
    public var contentType: String?
    /// The raw body, kept for the retention period (GitHub can redeliver for 3 days); nil after.
    public var payload: Data?
    public var payloadBytes: Int
    /// How many times the same id arrived again.
    public var duplicates: Int
    /// SHA-256 of the signed body, in hex, when it was recorded at ingress (written, not read back).
    public var bodyDigest: String?

    public init(
        id: String, hookID: String?, event: String, action: String?, receivedAt: UnixTime, repository: String?,
        runID: Int?, runAttempt: Int?, outcome: Outcome, reason: String?, contentType: String?, payload: Data?,
        payloadBytes: Int, duplicates: Int = 0
    ) {
        self.id = id
        self.hookID = hookID
        self.event = event
        self.action = action
        self.receivedAt = receivedAt
        self.repository = repository
        self.runID = runID
        self.runAttempt = runAttempt
        self.outcome = outcome
        self.reason = reason
        self.contentType = contentType
        self.payload = payload
        self.payloadBytes = payloadBytes
        self.duplicates = duplicates
    }
}

/// `deliveries`: recording what arrived, counting redeliveries, and the CLI's, admin API's and
/// status page's reads (`deliveries_by_time`, `deliveries_by_run`, the primary key).
extension BridgeDatabase {
    /// True when a delivery with this id was recorded before (GitHub repeats the id on redelivery).
    public func hasDelivery(_ id: String) throws -> Bool {
        let forms = try storedForms(of: id)
        return try store.queryOne(
            "SELECT 1 FROM deliveries WHERE id IN (\(Self.placeholders(forms.count)))", forms.map { .text($0) }
        ) { _ in true } ?? false
    }

    /// Counts a repeated delivery on its first record; returns how many rows it counted on (0 when
    /// none holds `id`).
    @discardableResult
    public func recordDuplicate(_ id: String, at now: UnixTime) throws -> Int {
        let forms = try storedForms(of: id)
        return try store.run(
            "UPDATE deliveries SET duplicates = duplicates + 1, last_duplicate_at = ? "
                + "WHERE id IN (\(Self.placeholders(forms.count)))",
            [.real(now)] + forms.map { .text($0) })
    }

    /// The forms a row for `id` may have: its `DeliveryKey` form, and for a version-1 id the id as
    /// sent when a row from before that layout may hold it (see `DeliveryKey.mayBeStoredAsSent`), or
    /// whenever `always` asks (reads by id, which are rare). Any other id only ever had one form.
    func storedForms(of id: String, always: Bool = false) throws -> [String] {
        let stored = DeliveryKey.stored(id)
        let asSent =
            always
            ? DeliveryKey.timestamp(ofID: id) != nil
            : try DeliveryKey.mayBeStoredAsSent(id, legacyCutoff: legacyDeliveryIDCutoff())
        return asSent ? [stored, id] : [stored]
    }

    /// When the newest delivery stored before the time-ordered id layout arrived; 0 when there was
    /// none. Read from its one-row table once, then kept.
    func legacyDeliveryIDCutoff() throws -> UnixTime {
        if let cutoff = legacyDeliveryIDCutoffRead { return cutoff }
        let cutoff =
            try store.queryOne("SELECT unordered_before FROM delivery_id_layout WHERE id = 1", []) {
                $0.double(0) ?? 0
            } ?? 0
        legacyDeliveryIDCutoffRead = cutoff
        return cutoff
    }

    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    /// Records a delivery. Its payload is kept compressed when that is smaller: pass `stored` when
    /// it was compressed already (on the HTTP thread), else it is compressed here.
    public func insert(_ delivery: DeliveryRecord, stored: PayloadCompression.Stored? = nil) throws {
        let payload = stored ?? delivery.payload.map(PayloadCompression.stored)
        try store.run(
            """
            INSERT INTO deliveries (id, hook_id, event, action, received_at, repository, run_id, run_attempt, outcome,
                reason, content_type, payload, payload_bytes, duplicates, payload_encoding, body_digest)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
                // Shared with other instances: one of them may have committed the same redelivery
                // since this one looked (that copy waits for the leader; applying twice is harmless).
                + (store.dialect == .postgresql ? " ON CONFLICT (id) DO NOTHING" : ""),
            [
                .text(DeliveryKey.stored(delivery.id)), .string(delivery.hookID), .text(delivery.event),
                .string(delivery.action), .real(delivery.receivedAt), .string(delivery.repository),
                .int(delivery.runID),
                .int(delivery.runAttempt), .text(delivery.outcome.rawValue), .string(delivery.reason),
                .string(delivery.contentType), payload.map { .blob($0.bytes) } ?? .null,
                .integer(Int64(delivery.payloadBytes)), .integer(Int64(delivery.duplicates)),
                .text((payload?.encoding ?? .identity).rawValue), .string(delivery.bodyDigest),
            ])
    }

    /// The delivery recorded with the same signed body (`digest`, SHA-256 in hex) since `since`, if
    /// any: a captured delivery replayed under a new `X-GitHub-Delivery` is answered as a duplicate
    /// of it (`deliveries_by_body`).
    public func delivery(withBody digest: String, since: UnixTime) throws -> String? {
        try store.queryOne(
            "SELECT id FROM deliveries WHERE body_digest = ? AND received_at >= ? LIMIT 1",
            [.text(digest), .real(since)]
        ) { row in row.string(0).map { DeliveryKey.id(fromStored: $0) } } ?? nil
    }

    /// Recent deliveries, newest first; `run` narrows to one run attempt. Both orders come from an
    /// index (`deliveries_by_time`; `deliveries_by_run` ends with `received_at`), so no sort.
    public func listDeliveries(run: RunKey? = nil, limit: Int = 50, includePayload: Bool = false) throws
        -> [DeliveryRecord]
    {
        var sql = """
            SELECT id, hook_id, event, action, received_at, repository, run_id, run_attempt, outcome, reason,
                content_type, \(includePayload ? "payload" : "NULL"), payload_bytes, duplicates, payload_encoding
            FROM deliveries
            """
        var arguments: [SQLiteValue] = []
        if let run {
            sql += " WHERE repository = ? AND run_id = ? AND run_attempt = ?"
            arguments += [.text(run.repository), .integer(Int64(run.runID)), .integer(Int64(run.attempt))]
        }
        // Ties broken by insertion order: SQLite's rowid; PostgreSQL's ids are the GUIDs, so the
        // newest of a tie is the one with the highest id there (both orders are stable).
        sql +=
            store.dialect == .sqlite
            ? " ORDER BY received_at DESC, rowid DESC LIMIT ?" : " ORDER BY received_at DESC, id DESC LIMIT ?"
        arguments.append(.integer(Int64(limit)))
        return try store.query(sql, arguments, Self.deliveryRecord)
    }

    /// One delivery by id, with its payload while retention keeps it.
    public func delivery(id: String) throws -> DeliveryRecord? {
        let forms = try storedForms(of: id, always: true)
        return try store.queryOne(
            """
            SELECT id, hook_id, event, action, received_at, repository, run_id, run_attempt, outcome, reason,
                content_type, payload, payload_bytes, duplicates, payload_encoding FROM deliveries
            WHERE id IN (\(Self.placeholders(forms.count)))
            """,
            forms.map { .text($0) }, Self.deliveryRecord)
    }

    /// A `deliveries` row (columns as the queries above select them), its payload inflated. A
    /// payload that does not inflate to its recorded size (a damaged row) reads as nil.
    static func deliveryRecord(_ row: StoreRow) -> DeliveryRecord {
        let size = row.int(12) ?? 0
        let encoding = PayloadCompression.Encoding(rawValue: row.string(14) ?? "") ?? .identity
        let payload = row.data(11).flatMap {
            PayloadCompression.payload(PayloadCompression.Stored(encoding: encoding, bytes: $0), size: size)
        }
        return DeliveryRecord(
            id: DeliveryKey.id(fromStored: row.string(0) ?? ""), hookID: row.string(1), event: row.string(2) ?? "",
            action: row.string(3),
            receivedAt: row.double(4) ?? 0, repository: row.string(5), runID: row.int(6), runAttempt: row.int(7),
            outcome: DeliveryRecord.Outcome(rawValue: row.string(8) ?? "") ?? .rejected, reason: row.string(9),
            contentType: row.string(10), payload: payload, payloadBytes: size,
            duplicates: row.int(13) ?? 0)
    }
}
