import BridgeCore
import Foundation

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
                \(store.dialect == .sqlite
                    ? "json_extract(r.state, '$.updatesSpent')" : "(run_state_json(r.state) #>> '{updatesSpent}')::bigint")
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
        return try store.query(sql, arguments) { row in
            RunListing(
                key: RunKey(repository: row.string(0) ?? "", runID: row.int(1) ?? 0, attempt: row.int(2) ?? 1),
                workflow: row.string(3), branch: row.string(4), runNumber: row.int(5), status: row.string(6) ?? "",
                conclusion: row.string(7), slug: row.string(8) ?? "",
                ownerPhase: row.string(9).flatMap(ActivitySession.Phase.init(rawValue:)),
                updatedAt: row.double(10) ?? 0, lastPushAt: row.double(11), updatesSpent: row.int(12))
        }
    }
}
