import BridgeCore
import BridgeStore
import Foundation

/// Alerts: planned by the core with the delivery (recorded in its transaction), sent here by the
/// dispatcher's loop, each answer recorded. Everything about what to do after an answer is
/// `AlertRetry`; this file is bookkeeping and log lines.
extension BridgeService {
    /// The runs that finished by the grace period in `dueRequests` had no history to ask whether
    /// a success fixed something: planned now, with the store's.
    func planAlertsOfFinishedRuns() {
        guard configuration.sendsNotifications else { return }
        do {
            try engine.planAlerts(history: StoreHistory(database))
        } catch {
            logger.error(
                "could not read history to plan alerts; trying again next tick", ["error": .string("\(error)")])
        }
    }

    func noteAlertsPlanned(at now: UnixTime) {
        alerts.planned(at: now)
        wakeups.signal()
    }

    /// The alerts due now, each counted as attempted before it is handed out (committed): a crash
    /// from here on sends it again, never zero times.
    public func dueAlerts(at now: UnixTime) -> [AlertRecord] {
        guard lead.allows(.start), alerts.opens(at: now) else { return [] }
        do {
            var held = false
            var paced = false
            let records = try database.dueAlerts(at: now).filter { !alerts.isOut($0.id) }
                .compactMap { record -> AlertRecord? in
                    switch link(record, at: now) {
                    case .hold:
                        held = true
                        return nil
                    case .send(let body):
                        // The pacer's room, as a card's start would take it; none: the next turn.
                        guard !paced, engine.admitPaced(.starting, at: now) else {
                            paced = true
                            return nil
                        }
                        var ready = record
                        ready.body = body
                        return ready
                    }
                }
            countPacerHeld()
            if !records.isEmpty {
                try leaderWrite("starting an alert's attempt") { database in
                    for record in records { try database.startAlertAttempt(record.id, at: now) }
                }
            }
            // Paced: looked at again when the pacer has room, or PushWard's rate limit lifts.
            let room =
                paced
                ? [engine.pacer?.roomAt(for: .starting, after: now), engine.gate.rateLimitedUntil]
                    .compactMap { $0 }.filter { $0 > now }.max() ?? now + 1 : nil
            alerts.handOut(records.map(\.id))
            alerts.reschedule(stored: try database.nextAlertDue(), held: held, pacedRoom: room, at: now)
            return records.map { record in
                var started = record
                started.attempts += 1
                return started
            }
        } catch is LeadLost {
            // Deposed: what was planned goes back to the new leader, which reads the rows.
            return []
        } catch {
            logger.error("could not read the alerts due; trying again shortly", ["error": .string("\(error)")])
            alerts.unreadable(at: now)
            return []
        }
    }

    /// How long an alert waits for its run's card to be created, so it can link to it.
    static let linkWait: Double = 30

    enum Link {
        case hold
        case send(body: String)
    }

    /// The body to send: with `activity_slug` when PushWard has the run's activity; held (for at
    /// most `linkWait`) while the create is still under way; without a link after that. Without
    /// `target` once PushWard refused one, even if the alert was planned before.
    func link(_ record: AlertRecord, at now: UnixTime) -> Link {
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

    /// Records what PushWard answered to an alert's POST, and what follows from it.
    public func completeAlert(_ record: AlertRecord, answer: NotificationAnswer, dryRun: Bool, at now: UnixTime) {
        alerts.finished(record.id)
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
        let outcome: String
        // The row is the leader's to write: a deposed leader's answer changes nothing (the alert's
        // attempt stays counted, and the new leader sends it again when due, never zero times).
        let finish = { (write: (BridgeDatabase) throws -> Void) throws in
            try self.leaderWrite("recording an alert's answer", write)
        }
        do {
            switch step {
            case .sent:
                guard case .sent(_, let id, let delivery, let reason) = answer else { return }
                let shown = dryRun ? "dry-run" : [delivery, reason].compactMap { $0 }.joined(separator: ": ")
                try finish {
                    try $0.finishAlertAttempt(
                        record.id, state: .sent, status: status, detail: nil, notificationID: id,
                        delivery: shown.isEmpty ? nil : shown, sentBody: record.body, at: now)
                }
                outcome = dryRun ? "dry-run" : "sent"
                if let delivery, delivery != "all" { metadata["alert.delivery"] = .string(shown) }
                logger.info(dryRun ? "alert recorded (dry run)" : "alert sent", metadata)
            case .retry(let at):
                if case .problem(let problem) = answer, problem.status == 429 {
                    // PushWard's per-minute limit holds every request, not this alert alone.
                    noteRateLimited(retryAfter: problem.retryAfter, at: now)
                }
                try finish {
                    try $0.finishAlertAttempt(
                        record.id, state: .pending, status: status, detail: Self.detail(of: answer), nextAttemptAt: at,
                        at: now)
                }
                outcome = "retried"
                metadata["alert.retry_at"] = .string(GitHubTimestamp.format(at))
                metadata["error"] = .string(Self.detail(of: answer) ?? "")
                logger.warning("alert not sent; trying again", metadata)
            case .retryWithoutTarget:
                // Sent again at once; `link` leaves the target out from now on.
                try finish {
                    try $0.finishAlertAttempt(
                        record.id, state: .pending, status: status, detail: Self.detail(of: answer), nextAttemptAt: now,
                        at: now)
                }
                outcome = "retried"
                if engine.gate.targetsRefusedAt == nil {
                    engine.refuseTargets(at: now)
                    persistChanges(at: now)
                    sayTargetsRefused(metadata)
                }
            case .retryWithoutActivity:
                try finish {
                    try $0.finishAlertAttempt(
                        record.id, state: .pending, status: status, detail: Self.detail(of: answer), nextAttemptAt: now,
                        clearActivity: true, at: now)
                }
                outcome = "retried"
                logger.notice(
                    "PushWard does not know the run's activity; sending the alert without the link to it", metadata)
            case .pause(let until, let why):
                try finish {
                    try $0.finishAlertAttempt(
                        record.id, state: .pending, status: status, detail: Self.detail(of: answer),
                        nextAttemptAt: until,
                        at: now)
                }
                outcome = "paused"
                pauseAlerts(until: until, why: why, metadata)
            case .failed(let why):
                try finish {
                    try $0.finishAlertAttempt(record.id, state: .failed, status: status, detail: why, at: now)
                }
                outcome = "failed"
                metadata["error"] = .string(why)
                logger.error("alert refused; it will not be sent", metadata)
            }
        } catch is LeadLost {
            return
        } catch {
            logger.error("could not record an alert's answer", metadata.merging(["error": .string("\(error)")]) { $1 })
            return
        }
        metrics.add("alerts_total", labels: ["reason": record.reason.rawValue, "outcome": outcome])
        alerts.answered(stored: (try? database.nextAlertDue()) ?? nil)
        wakeups.signal()
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
    func noteNotificationUsage(_ usage: PushWardUsage, at now: UnixTime) {
        guard configuration.sendsNotifications, let limit = usage.notificationsLimit, usage.notificationsUsed >= limit
        else { return }
        pauseAlerts(
            until: max(usage.quotaResetsAt ?? now + 3_600, now + 60),
            why: "the notification quota is spent (\(usage.notificationsUsed) of \(limit))", [:])
    }

    /// Holds every alert back until `until`, said once for as long as the pause lasts.
    private func pauseAlerts(until: UnixTime, why: String, _ metadata: [String: JSONValue]) {
        guard alerts.pause(until: until, why: why) else { return }
        var metadata = metadata
        metadata["alert.paused_until"] = .string(GitHubTimestamp.format(until))
        metadata["alert.why"] = .string(why)
        logger.warning("alerts paused; activity cards go on", metadata)
    }
}
