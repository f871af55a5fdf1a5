import BridgeCore
import Foundation

/// The read side. These queries serve the CLI (`runs list/show`, `deliveries list/show`,
/// `explain`), the admin API (`/api/runs`, `/api/runs/{id}`, `/api/deliveries[/{id}]`, through
/// `RunDocument` and `DeliveryDocument`) and the status page (`StatusSnapshot`). Safe on a
/// read-only connection while the daemon writes.
extension BridgeDatabase {
    /// One attempt as `runs list`, `GET /api/runs` and the status page list it: one row of the
    /// listing query, so the three cannot disagree on what a run is.
    public struct RunListing: Sendable, Equatable {
        public var key: RunKey
        public var workflow: String?
        public var branch: String?
        public var runNumber: Int?
        public var status: String
        public var conclusion: String?
        public var slug: String
        /// The phase of the slug's activity while this attempt is its owner (it may have ended
        /// since); nil while another attempt owns it or none ever did.
        public var ownerPhase: ActivitySession.Phase?
        public var updatedAt: UnixTime
        public var lastPushAt: UnixTime?
        /// PushWard updates (POST and PATCH) the run's activity cost: what the run spent of the
        /// monthly budget. Nil for a run recorded before the bridge counted them.
        public var updatesSpent: Int?

        public init(
            key: RunKey, workflow: String?, branch: String?, runNumber: Int?, status: String, conclusion: String?,
            slug: String, ownerPhase: ActivitySession.Phase?, updatedAt: UnixTime, lastPushAt: UnixTime? = nil,
            updatesSpent: Int? = nil
        ) {
            self.key = key
            self.workflow = workflow
            self.branch = branch
            self.runNumber = runNumber
            self.status = status
            self.conclusion = conclusion
            self.slug = slug
            self.ownerPhase = ownerPhase
            self.updatedAt = updatedAt
            self.lastPushAt = lastPushAt
            self.updatesSpent = updatesSpent
        }

        /// The attempt is its activity's owner, ended or not: the status page tells "nothing on
        /// the phones yet" from "never drew its card" by it.
        public var ownsActivity: Bool { ownerPhase != nil }

        /// The attempt owns an activity that has not ended: the `*` of `runs list` and the
        /// `owns_card` of `/api/runs`.
        public var holdsLiveActivity: Bool { ownerPhase.map { $0 != .ended } ?? false }
    }

    /// Recent runs, those still going first, then by last update. The ORDER BY is exactly the
    /// expression `runs_by_listing` (and, per repository, `runs_by_repository_listing`) is built on,
    /// so SQLite walks that index and stops after `limit` rows instead of sorting every run ever
    /// stored; change one and the other must follow (QueryPlanTests fails otherwise).
    public func listRuns(repository: String? = nil, limit: Int = 20) throws -> [RunListing] {
        var sql = """
            SELECT r.repository, r.run_id, r.attempt, r.workflow, r.branch, r.run_number, r.status, r.conclusion,
                r.slug, a.phase, r.updated_at,
                (SELECT MAX(sent_at) FROM pushes p WHERE p.repository = r.repository AND p.run_id = r.run_id
                    AND p.attempt = r.attempt),
                json_extract(r.state, '$.updatesSpent')
            FROM runs r
            LEFT JOIN activities a ON a.slug = r.slug AND a.owner_repository = r.repository
                AND a.owner_run_id = r.run_id AND a.owner_attempt = r.attempt
            """
        var arguments: [SQLiteValue] = []
        if let repository {
            sql += " WHERE r.repository = ?"
            arguments.append(.text(repository))
        }
        sql += " ORDER BY r.status = 'completed', r.updated_at DESC LIMIT ?"
        arguments.append(.integer(Int64(limit)))
        return try connection.query(sql, arguments) { row in
            RunListing(
                key: RunKey(repository: row.string(0) ?? "", runID: row.int(1) ?? 0, attempt: row.int(2) ?? 1),
                workflow: row.string(3), branch: row.string(4), runNumber: row.int(5), status: row.string(6) ?? "",
                conclusion: row.string(7), slug: row.string(8) ?? "",
                ownerPhase: row.string(9).flatMap(ActivitySession.Phase.init(rawValue:)),
                updatedAt: row.double(10) ?? 0, lastPushAt: row.double(11), updatesSpent: row.int(12))
        }
    }

    /// Every attempt of a run id (newest first), across repositories: `runs_by_run_id`, since the
    /// primary key starts with the repository, which the caller does not know.
    public func runAttempts(runID: Int) throws -> [StoredRun] {
        try connection.query(
            "SELECT state, slug, released, updated_at FROM runs WHERE run_id = ? ORDER BY attempt DESC",
            [.integer(Int64(runID))]
        ) { row in
            StoredRun(
                state: try decode(RunState.self, row.string(0) ?? ""), slug: row.string(1) ?? "",
                released: row.int(2) == 1, updatedAt: row.double(3) ?? 0)
        }
    }

    /// The card a slug names, as last written.
    public func card(slug: String) throws -> (card: StoredCard, acknowledged: JSONValue?)? {
        try connection.queryOne(
            "SELECT session, progress_floor, desired, acknowledged, updated_at FROM activities WHERE slug = ?",
            [.text(slug)]
        ) { row in
            let card = StoredCard(
                session: try decode(ActivitySession.self, row.string(0) ?? ""),
                floor: try row.string(1).map { try decode(ProgressFloor.self, $0) },
                desired: try row.string(2).map { try JSONValue(parsing: Data($0.utf8)) }, updatedAt: row.double(4) ?? 0)
            return (card, try row.string(3).map { try JSONValue(parsing: Data($0.utf8)) })
        }
    }

    /// The requests made for a run attempt, oldest first.
    public func pushes(for run: RunKey) throws -> [PushRecord] {
        try connection.query(
            """
            SELECT id, slug, kind, method, path, body, sent_at, status, outcome, detail FROM pushes
            WHERE repository = ? AND run_id = ? AND attempt = ? ORDER BY id
            """,
            [.text(run.repository), .integer(Int64(run.runID)), .integer(Int64(run.attempt))]
        ) { row in
            PushRecord(
                id: row.int(0).map(Int64.init), slug: row.string(1) ?? "", run: run, kind: row.string(2) ?? "",
                method: row.string(3) ?? "", path: row.string(4) ?? "", body: row.string(5) ?? "",
                sentAt: row.double(6) ?? 0, status: row.int(7), outcome: row.string(8) ?? "", detail: row.string(9))
        }
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
        sql += " ORDER BY received_at DESC, rowid DESC LIMIT ?"
        arguments.append(.integer(Int64(limit)))
        return try connection.query(sql, arguments, Self.deliveryRecord)
    }

    /// One delivery by id, with its payload while retention keeps it.
    public func delivery(id: String) throws -> DeliveryRecord? {
        try connection.queryOne(
            """
            SELECT id, hook_id, event, action, received_at, repository, run_id, run_attempt, outcome, reason,
                content_type, payload, payload_bytes, duplicates, payload_encoding FROM deliveries WHERE id = ?
            """,
            [.text(id)], Self.deliveryRecord)
    }

    /// A `deliveries` row (columns as the queries above select them), its payload inflated. A
    /// payload that does not inflate to its recorded size (a damaged row) reads as nil.
    static func deliveryRecord(_ row: SQLiteRow) -> DeliveryRecord {
        let size = row.int(12) ?? 0
        let encoding = PayloadCompression.Encoding(rawValue: row.string(14) ?? "") ?? .identity
        let payload = row.data(11).flatMap {
            PayloadCompression.payload(PayloadCompression.Stored(encoding: encoding, bytes: $0), size: size)
        }
        return DeliveryRecord(
            id: row.string(0) ?? "", hookID: row.string(1), event: row.string(2) ?? "", action: row.string(3),
            receivedAt: row.double(4) ?? 0, repository: row.string(5), runID: row.int(6), runAttempt: row.int(7),
            outcome: DeliveryRecord.Outcome(rawValue: row.string(8) ?? "") ?? .rejected, reason: row.string(9),
            contentType: row.string(10), payload: payload, payloadBytes: size,
            duplicates: row.int(13) ?? 0)
    }
}
