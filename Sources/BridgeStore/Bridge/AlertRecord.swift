import BridgeCore
import Foundation

/// One row of `alerts`: a notification planned for a run, and what became of it.
public struct AlertRecord: Sendable, Equatable {
    public enum State: String, Sendable {
        /// Recorded, not yet acknowledged by PushWard: the sender's queue.
        case pending
        case sent
        /// Refused for good or given up on; `detail` says why.
        case failed
    }

    public var id: Int64
    public var run: RunKey
    public var reason: AlertReason
    /// The `POST /notifications` body, as it will be (or was last) sent.
    public var body: String
    public var activitySlug: String?
    public var createdAt: UnixTime
    public var state: State
    /// POSTs started: above zero, an earlier one may have reached PushWard.
    public var attempts: Int
    public var nextAttemptAt: UnixTime
    public var lastAttemptAt: UnixTime?
    public var status: Int?
    public var detail: String?
    public var notificationID: Int64?
    /// PushWard's `delivery` (`all`, `partial`, `none`), with its `reason` when not all.
    public var delivery: String?
    public var sentAt: UnixTime?
    /// Who this copy is for (`PlannedAlert.recipient`): a review's approver; empty otherwise.
    public var recipient: String = ""

    public init(
        id: Int64, run: RunKey, reason: AlertReason, body: String, activitySlug: String?, createdAt: UnixTime,
        state: State, attempts: Int, nextAttemptAt: UnixTime, lastAttemptAt: UnixTime?, status: Int?, detail: String?,
        notificationID: Int64?, delivery: String?, sentAt: UnixTime?
    ) {
        self.id = id
        self.run = run
        self.reason = reason
        self.body = body
        self.activitySlug = activitySlug
        self.createdAt = createdAt
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastAttemptAt = lastAttemptAt
        self.status = status
        self.detail = detail
        self.notificationID = notificationID
        self.delivery = delivery
        self.sentAt = sentAt
    }

    /// The body's `title`, for lists.
    public var title: String {
        (try? JSONValue(parsing: Data(body.utf8)))?["title"]?.stringValue ?? ""
    }
}

/// `alerts`: recording a planned alert once per run, reason and recipient, the sender's queue and its
/// bookkeeping, and a run's alerts for the CLI, the admin API and the status page.
extension BridgeDatabase {
    static let alertColumns = """
        id, repository, run_id, attempt, reason, body, activity_slug, created_at, state, attempts, next_attempt_at,
        last_attempt_at, status, detail, notification_id, delivery, sent_at, recipient
        """

    /// Records a planned alert, due now; nothing when the run already has one for the reason and
    /// recipient.
    func insert(_ alert: PlannedAlert, at now: UnixTime) throws {
        try store.run(
            """
            INSERT INTO alerts (repository, run_id, attempt, reason, body, activity_slug, created_at, state,
                next_attempt_at, recipient)
            VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)
            ON CONFLICT (repository, run_id, reason, recipient) DO NOTHING
            """,
            [
                .text(alert.run.repository), .integer(Int64(alert.run.runID)), .integer(Int64(alert.run.attempt)),
                .text(alert.reason.rawValue), .text(alert.body.canonicalString), .string(alert.activitySlug),
                .real(now), .real(now), .text(alert.recipient),
            ])
    }

    /// Pending alerts due by `now`, oldest first, through `alerts_pending`.
    public func dueAlerts(at now: UnixTime, limit: Int = 50) throws -> [AlertRecord] {
        try store.query(
            """
            SELECT \(Self.alertColumns) FROM alerts
            WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?
            """, [.real(now), .integer(Int64(limit))], Self.alertRecord)
    }

    /// When the next pending alert falls due; nil when none is pending.
    public func nextAlertDue() throws -> UnixTime? {
        try store.queryOne(
            "SELECT next_attempt_at FROM alerts WHERE state = 'pending' ORDER BY next_attempt_at LIMIT 1", []
        ) { $0.double(0) ?? 0 }
    }

    /// Counts a POST as started, before it is sent: a crash after this line sends it again (the
    /// body's `collapse_id` keeps the phone from showing it twice), never zero times.
    public func startAlertAttempt(_ id: Int64, at now: UnixTime) throws {
        try store.run(
            "UPDATE alerts SET attempts = attempts + 1, last_attempt_at = ? WHERE id = ?", [.real(now), .integer(id)])
    }

    /// Records what became of an attempt. `sentBody`: the body PushWard took (with the link and
    /// target it was sent with), kept as the record of what went out. `clearActivity`: later
    /// attempts no longer link the run's card (PushWard did not know it).
    public func finishAlertAttempt(
        _ id: Int64, state: AlertRecord.State, status: Int?, detail: String?, nextAttemptAt: UnixTime? = nil,
        notificationID: Int64? = nil, delivery: String? = nil, sentBody: String? = nil, clearActivity: Bool = false,
        at now: UnixTime
    ) throws {
        try store.run(
            """
            UPDATE alerts SET state = ?, status = ?, detail = ?, next_attempt_at = COALESCE(?, next_attempt_at),
                notification_id = COALESCE(?, notification_id), delivery = COALESCE(?, delivery),
                body = COALESCE(?, body), activity_slug = CASE WHEN ? THEN NULL ELSE activity_slug END,
                sent_at = CASE WHEN ? = 'sent' THEN ? ELSE sent_at END
            WHERE id = ?
            """,
            [
                .text(state.rawValue), .int(status), .string(detail), nextAttemptAt.map { .real($0) } ?? .null,
                notificationID.map { .integer($0) } ?? .null, .string(delivery), .string(sentBody),
                .integer(clearActivity ? 1 : 0),
                .text(state.rawValue), .real(now), .integer(id),
            ])
    }

    /// Every alert of a run id (all attempts), by reason (failure, fixed, waiting: the unique key's order).
    public func alerts(repository: String, runID: Int) throws -> [AlertRecord] {
        try store.query(
            "SELECT \(Self.alertColumns) FROM alerts WHERE repository = ? AND run_id = ? ORDER BY reason",
            [.text(repository), .integer(Int64(runID))], Self.alertRecord)
    }

    static func alertRecord(_ row: StoreRow) -> AlertRecord {
        var record = AlertRecord(
            id: Int64(row.int(0) ?? 0),
            run: RunKey(repository: row.string(1) ?? "", runID: row.int(2) ?? 0, attempt: row.int(3) ?? 1),
            reason: AlertReason(rawValue: row.string(4) ?? "") ?? .failure, body: row.string(5) ?? "",
            activitySlug: row.string(6), createdAt: row.double(7) ?? 0,
            state: AlertRecord.State(rawValue: row.string(8) ?? "") ?? .pending, attempts: row.int(9) ?? 0,
            nextAttemptAt: row.double(10) ?? 0, lastAttemptAt: row.double(11), status: row.int(12),
            detail: row.string(13), notificationID: row.int(14).map(Int64.init), delivery: row.string(15),
            sentAt: row.double(16))
        record.recipient = row.string(17) ?? ""
        return record
    }
}
