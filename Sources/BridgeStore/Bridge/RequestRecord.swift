import BridgeCore
import Foundation

/// One request the dispatcher sent (or, in dry-run mode, would have sent), and PushWard's answer.
public struct RequestRecord: Sendable, Equatable {
    public var id: Int64?
    public var slug: String
    public var run: RunKey
    public var kind: String
    public var method: String
    public var path: String
    public var body: String
    public var sentAt: UnixTime
    /// The HTTP status; nil when no answer came (connection error, timeout) or in dry-run mode.
    public var status: Int?
    /// `acknowledged`, `dry-run`, `failed`, `rejected`, …
    public var outcome: String
    public var detail: String?

    public init(
        id: Int64? = nil, slug: String, run: RunKey, kind: String, method: String, path: String, body: String,
        sentAt: UnixTime, status: Int?, outcome: String, detail: String?
    ) {
        self.id = id
        self.slug = slug
        self.run = run
        self.kind = kind
        self.method = method
        self.path = path
        self.body = body
        self.sentAt = sentAt
        self.status = status
        self.outcome = outcome
        self.detail = detail
    }
}

/// `pushes`: recording each request and its answer, a run's requests, and the month chart's bars.
/// The pushes table keeps every request until retention removes its run, and the page is read
/// every few seconds, so the chart reads a row per day (`pushes_per_day`, kept by a trigger) and
/// counts only the first day from `pushes` itself (`pushes_by_time`).
extension BridgeDatabase {
    /// Records a request the dispatcher made and its answer.
    public func insert(_ push: RequestRecord) throws {
        try store.run(
            """
            INSERT INTO pushes (slug, repository, run_id, attempt, kind, method, path, body, sent_at, status, outcome,
                detail)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(push.slug), .text(push.run.repository), .integer(Int64(push.run.runID)),
                .integer(Int64(push.run.attempt)), .text(push.kind), .text(push.method), .text(push.path),
                .text(push.body), .real(push.sentAt), .int(push.status), .text(push.outcome), .string(push.detail),
            ])
    }

    /// The requests made for a run attempt, oldest first.
    public func requests(for run: RunKey) throws -> [RequestRecord] {
        try store.query(
            """
            SELECT id, slug, kind, method, path, body, sent_at, status, outcome, detail FROM pushes
            WHERE repository = ? AND run_id = ? AND attempt = ? ORDER BY id
            """,
            [.text(run.repository), .integer(Int64(run.runID)), .integer(Int64(run.attempt))]
        ) { row in
            RequestRecord(
                id: row.int(0).map(Int64.init), slug: row.string(1) ?? "", run: run, kind: row.string(2) ?? "",
                method: row.string(3) ?? "", path: row.string(4) ?? "", body: row.string(5) ?? "",
                sentAt: row.double(6) ?? 0, status: row.int(7), outcome: row.string(8) ?? "", detail: row.string(9))
        }
    }

    /// Requests PushWard acknowledged (a 2xx status: each one counted against the monthly budget)
    /// per UTC day from `since`, as (start of the day, count), oldest first; days without one are
    /// left out. Dry-run and failed requests cost nothing and are not counted, nor does a DELETE.
    ///
    /// Whole days come from `pushes_per_day`, which a trigger keeps as requests are recorded, so
    /// the page reads a row per day rather than every request of the month; only the day `since`
    /// falls in is counted from `pushes` (through `pushes_by_time`), from `since` on.
    public func acknowledgedRequestsPerDay(since: UnixTime) throws -> [(day: UnixTime, count: Int)] {
        let first = (since / 86_400).rounded(.down)
        let partial =
            try store.queryOne(
                """
                SELECT COUNT(*) FROM pushes
                WHERE sent_at >= ? AND sent_at < ? AND status BETWEEN 200 AND 299 AND method <> 'DELETE'
                """,
                [.real(since), .real((first + 1) * 86_400)]
            ) { $0.int(0) ?? 0 } ?? 0
        let whole = try store.query(
            "SELECT day, acknowledged FROM pushes_per_day WHERE day > ? ORDER BY day", [.integer(Int64(first))]
        ) { row in
            (day: Double(row.int(0) ?? 0) * 86_400, count: row.int(1) ?? 0)
        }
        return (partial > 0 ? [(day: first * 86_400, count: partial)] : []) + whole
    }
}
