import BridgeCore
import BridgeStore
import Foundation

/// Alerts: planned by the core with the delivery (recorded in its transaction), sent by the
/// dispatcher's loop, each answer recorded. Everything about what to do after an answer is
/// `AlertRetry`; this is bookkeeping and log lines, each method a part of a turn
/// (`BridgeService.turn`). The alerts themselves are rows of the store; `outbox` is when to look
/// at them again.
struct AlertSender: Sendable {
    /// How long an alert waits for its run's card to be created, so it can link to it.
    static let linkWait: Double = 30

    var outbox: AlertOutbox
    /// Whether the configuration has alerts at all.
    let sendsNotifications: Bool

    init(sendsNotifications: Bool, nextDue: UnixTime?) {
        self.sendsNotifications = sendsNotifications
        outbox = AlertOutbox(nextDue: nextDue)
    }

    /// The runs that finished by the grace period in `dueRequests` had no history to ask whether
    /// a success fixed something: planned now, with the store's.
    func planFinishedRuns(_ engine: inout BridgeEngine, history: StoreHistory, log: Logger) {
        guard sendsNotifications else { return }
        do {
            try engine.planAlerts(history: history)
        } catch {
            log.error(
                "could not read history to plan alerts; trying again next tick", ["error": .string("\(error)")])
        }
    }

    /// The alerts due now, each counted as attempted before it is handed out (committed with the
    /// turn): a crash from here on sends it again, never zero times.
    mutating func due(in turn: inout ServiceTurn) throws -> [AlertRecord] {
        let now = turn.now
        var held = false
        var paced = false
        var records: [AlertRecord] = []
        for record in try turn.database.dueAlerts(at: now) where !outbox.isOut(record.id) {
            switch Self.link(record, engine: turn.engine, at: now) {
            case .hold:
                held = true
            case .send(let body):
                // The pacer's room, as a card's start would take it; none: the next turn.
                guard !paced, turn.engine.admitPaced(.starting, at: now) else {
                    paced = true
                    continue
                }
                var ready = record
                ready.body = body
                records.append(ready)
            }
        }
        turn.countPacerHeld()
        for record in records { try turn.database.startAlertAttempt(record.id, at: now) }
        // Paced: looked at again when the pacer has room, or PushWard's rate limit lifts.
        let room =
            paced
            ? [turn.engine.pacer?.roomAt(for: .starting, after: now), turn.engine.gate.rateLimitedUntil]
                .compactMap { $0 }.filter { $0 > now }.max() ?? now + 1 : nil
        outbox.handOut(records.map(\.id))
        outbox.reschedule(stored: try turn.database.nextAlertDue(), held: held, pacedRoom: room, at: now)
        return records.map { record in
            var started = record
            started.attempts += 1
            return started
        }
    }

    enum Link {
        case hold
        case send(body: String)
    }

    /// The body to send: with `activity_slug` when PushWard has the run's activity; held (for at
    /// most `linkWait`) while the create is still under way; without a link after that. Without
    /// `target` once PushWard refused one, even if the alert was planned before.
    static func link(_ record: AlertRecord, engine: BridgeEngine, at now: UnixTime) -> Link {
        guard var body = (try? JSONValue(parsing: Data(record.body.utf8)))?.objectValue else {
            return .send(body: record.body)
        }
        if engine.gate.targetsRefusedAt != nil { body["target"] = nil }
        if let slug = record.activitySlug {
            // Not in memory: ended and idle, so it was created on PushWard.
            let session = engine.sessions[slug]
            if session == nil || session?.acknowledged != nil || session?.owner != record.run {
                body["activity_slug"] = .string(slug)
            } else if now < record.createdAt + Self.linkWait {
                return .hold
            }
        }
        return .send(body: JSONValue.object(body).canonicalString)
    }

    /// Records what PushWard answered to an alert's POST, and what follows from it. The row is the
    /// leader's to write: a deposed leader's answer changes nothing (the alert's attempt stays
    /// counted, and the new leader sends it again when due, never zero times).
    mutating func complete(
        _ record: AlertRecord, answer: NotificationAnswer, dryRun: Bool, in turn: inout ServiceTurn
    ) throws {
        let now = turn.now
        let body = (try? JSONValue(parsing: Data(record.body.utf8)))?.objectValue ?? [:]
        let step = AlertRetry.step(
            after: answer, attempts: record.attempts, namesActivity: body["activity_slug"] != nil,
            hasTarget: body["target"] != nil, at: now)
        var metadata: [String: JSONValue] = [
            "alert.id": .number(Double(record.id)), "alert.reason": .string(record.reason.rawValue),
            "run": .string(record.run.description), "alert.attempt": .number(Double(record.attempts)),
        ]
        let status: Int?
        switch answer {
        case .sent(let code, _, _, _): status = code
        case .problem(let problem): status = problem.status
        case .noAnswer: status = nil
        }
        let database = turn.database
        let outcome: String
        switch step {
        case .sent:
            guard case .sent(_, let id, let delivery, let reason) = answer else { return }
            let shown = dryRun ? "dry-run" : [delivery, reason].compactMap { $0 }.joined(separator: ": ")
            try database.finishAlertAttempt(
                record.id, state: .sent, status: status, detail: nil, notificationID: id,
                delivery: shown.isEmpty ? nil : shown, sentBody: record.body, at: now)
            outcome = dryRun ? "dry-run" : "sent"
            if let delivery, delivery != "all" { metadata["alert.delivery"] = .string(shown) }
            turn.log.info(dryRun ? "alert recorded (dry run)" : "alert sent", metadata)
        case .retry(let at):
            if case .problem(let problem) = answer, problem.status == 429 {
                // PushWard's per-minute limit holds every request, not this alert alone.
                turn.noteRateLimited(retryAfter: problem.retryAfter)
            }
            try database.finishAlertAttempt(
                record.id, state: .pending, status: status, detail: Self.detail(of: answer), nextAttemptAt: at,
                at: now)
            outcome = "retried"
            metadata["alert.retry_at"] = .string(GitHubTimestamp.format(at))
            metadata["error"] = .string(Self.detail(of: answer) ?? "")
            turn.log.warning("alert not sent; trying again", metadata)
        case .retryWithoutTarget:
            // Sent again at once; `link` leaves the target out from now on.
            try database.finishAlertAttempt(
                record.id, state: .pending, status: status, detail: Self.detail(of: answer), nextAttemptAt: now,
                at: now)
            outcome = "retried"
            if turn.engine.gate.targetsRefusedAt == nil {
                turn.engine.refuseTargets(at: now)
                turn.sayTargetsRefused(metadata)
            }
        case .retryWithoutActivity:
            try database.finishAlertAttempt(
                record.id, state: .pending, status: status, detail: Self.detail(of: answer), nextAttemptAt: now,
                clearActivity: true, at: now)
            outcome = "retried"
            turn.log.notice(
                "PushWard does not know the run's activity; sending the alert without the link to it", metadata)
        case .pause(let until, let why):
            try database.finishAlertAttempt(
                record.id, state: .pending, status: status, detail: Self.detail(of: answer), nextAttemptAt: until,
                at: now)
            outcome = "paused"
            pause(until: until, why: why, metadata, log: turn.log)
        case .failed(let why):
            try database.finishAlertAttempt(record.id, state: .failed, status: status, detail: why, at: now)
            outcome = "failed"
            metadata["error"] = .string(why)
            turn.log.error("alert refused; it will not be sent", metadata)
        }
        turn.metrics.add("alerts_total", labels: ["reason": record.reason.rawValue, "outcome": outcome])
        outbox.answered(stored: (try? database.nextAlertDue()) ?? nil)
        turn.wakesDispatcher = true
    }

    /// Why the alert is not sent, as its row records it.
    private static func detail(of answer: NotificationAnswer) -> String? {
        switch answer {
        case .sent: nil
        case .problem(let problem): problem.summary
        case .noAnswer(let reason): reason
        }
    }

    /// What `GET /auth/me` says of notifications: with the month's spent, alerts wait for the
    /// reset rather than spend a refused POST each (the same pause a 429 `quota.exceeded` with
    /// `kind: notifications` sets). Cards are counted on their own quota and go on.
    mutating func noteUsage(_ usage: PushWardUsage, log: Logger, at now: UnixTime) {
        guard sendsNotifications, let limit = usage.notificationsLimit, usage.notificationsUsed >= limit
        else { return }
        pause(
            until: max(usage.quotaResetsAt ?? now + 3_600, now + 60),
            why: "the notification quota is spent (\(usage.notificationsUsed) of \(limit))", [:], log: log)
    }

    /// Holds every alert back until `until`, said once for as long as the pause lasts.
    private mutating func pause(until: UnixTime, why: String, _ metadata: [String: JSONValue], log: Logger) {
        guard outbox.pause(until: until, why: why) else { return }
        var metadata = metadata
        metadata["alert.paused_until"] = .string(GitHubTimestamp.format(until))
        metadata["alert.why"] = .string(why)
        log.warning("alerts paused; activity cards go on", metadata)
    }
}
