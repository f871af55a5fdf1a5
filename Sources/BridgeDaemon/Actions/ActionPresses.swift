import BridgeCore
import BridgeStore
import Foundation

/// Presses of the buttons that act on GitHub (`actions`): each token checked, spent and recorded
/// in a turn of its own (any instance's: the press may reach a follower), then shown on the card in
/// a leader's turn. The GitHub call itself is `ActionDesk`'s, between the two.
public struct ActionPresses: Sendable {
    public let service: BridgeService
    let log: Logger
    let metrics: Metrics
    /// The instance the presses are recorded under (`Daemon.instanceName`).
    let instance: String

    public init(service: BridgeService, logger: Logger, metrics: Metrics, instance: String) {
        self.service = service
        self.log = logger
        self.metrics = metrics
        self.instance = instance
    }

    /// What the audit says when routing does not know who held the phone.
    static let unknownPresser = "anyone the key reaches"

    /// Approve and Reject: buttons that go to the approvers (`Reviewer`).
    static func isReview(_ kind: ActionKind) -> Bool { kind == .approve || kind == .reject }

    /// The GitHub login a review's recipient names; nil for the notification that stood for every
    /// approver ("the key's owner, one of …").
    static func login(_ recipient: String) -> String? {
        recipient.contains(" ") ? nil : recipient
    }

    /// What a press's transaction found: the token's binding, the run as it stands, why the
    /// action no longer applies (nil: it does), who pressed, and the press's id in `actions`.
    typealias SpentToken = (binding: ActionBinding, state: RunState?, problem: String?, presser: String, id: Int64)

    public enum PressAnswer: Sendable, Equatable {
        /// Unknown, used, expired, forged, or for a run where the action no longer makes sense:
        /// nothing was done, and the answer does not say which.
        case notFound
        case accepted(ActionPress)
    }

    /// A press of the button carrying `token`: the token is spent by one conditional update that
    /// returns its binding (`spendActionToken`), every copy bound to the same action is spent with
    /// it, and the press is recorded, all in one transaction, before anything is asked of GitHub.
    /// So a replay, a crash, a second copy or the same token pressed at once on another instance
    /// can never ask twice: the press whose update found the token unspent is the only one.
    func press(_ token: ActionToken, at now: UnixTime) async -> PressAnswer {
        do {
            guard let (binding, state, problem, presser, id) = try await spend(token, at: now) else {
                metrics.add("action_presses_total", labels: ["action": "unknown", "outcome": "not_found"])
                return .notFound
            }
            var metadata = Self.metadata(binding, person: presser)
            guard problem == nil else {
                metadata["action.why"] = .string(problem ?? "")
                log.notice(
                    "a button was pressed for a run where its action no longer applies; nothing done", metadata)
                metrics.add(
                    "action_presses_total", labels: ["action": binding.kind.rawValue, "outcome": "not_applicable"])
                return .notFound
            }
            log.notice("a button was pressed; asking GitHub", metadata)
            let approver = Self.isReview(binding.kind) ? binding.recipient.flatMap(Self.login) : nil
            await service.step("saying a press on the card", at: now) { turn in
                try turn.engine.noteAction(
                    binding.kind, on: binding.run,
                    text: binding.kind.requested(
                        by: approver ?? state.flatMap { turn.engine.recipient(of: $0).person }),
                    failed: false, at: now, history: turn.history)
                turn.wakesDispatcher = true
            }
            return .accepted(ActionPress(id: id, binding: binding, person: presser))
        } catch {
            log.error("could not check a pressed button; nothing done", ["error": .string("\(error)")])
            return .notFound
        }
    }

    /// How often a press whose transaction PostgreSQL ended to break a deadlock is tried again.
    static let deadlockRetries = 4

    /// The press's transaction: spends `token` (nil when it was not live), checks the run, spends
    /// the token's copies and records the press. Two copies of one action pressed at once on two
    /// instances each lock their own row first and then wait for the other's: PostgreSQL ends one
    /// transaction to break that deadlock, and that press is tried again, when it finds its token
    /// spent by the other one's copies. With both copies pressed on both instances, four
    /// transactions meet and the retry can meet a second cycle: up to `deadlockRetries` tries, as
    /// PostgreSQL advises for a transaction it chose to end, before the press is answered as failed.
    private func spend(_ token: ActionToken, at now: UnixTime) async throws -> SpentToken? {
        var tries = 0
        while true {
            do {
                return try await service.turn("recording a press", at: now, writer: .anyInstance) {
                    turn throws -> SpentToken? in
                    let database = turn.database
                    guard
                        let binding = try database.spendActionToken(
                            selector: token.selector, verifierHash: token.verifierHash, at: now)
                    else { return nil }
                    let state = try turn.engine.actionSubject(binding.run, history: turn.history)
                    let problem = turn.engine.actionProblem(
                        binding.kind, on: binding.run, environment: binding.environment,
                        newerAttemptStored: try database.hasNewerAttempt(than: binding.run))
                    // A review's token names its approver: the record says whose token approved.
                    let presser =
                        (Self.isReview(binding.kind) ? binding.recipient : nil)
                        ?? (state.map { turn.engine.recipient(of: $0).description } ?? nil) ?? Self.unknownPresser
                    try database.spendActionTokens(like: binding, at: now)
                    let id = try database.insertAction(
                        binding, person: presser, state: problem == nil ? .requested : .notApplicable, detail: problem,
                        instance: instance, at: now)
                    return (binding, state, problem, presser, id)
                }
            } catch let error as PostgresError where error.isDeadlock && tries < Self.deadlockRetries {
                tries += 1
            }
        }
    }

    /// Records GitHub's answer to a press; a refusal is said on the card and in an alert.
    public func finishPress(_ press: ActionPress, refusal: (status: Int?, detail: String)?, at now: UnixTime) async {
        var metadata = Self.metadata(press.binding, person: press.person)
        do {
            try await service.turn("recording GitHub's answer to a press", at: now, writer: .anyInstance) { turn in
                try turn.database.finishAction(
                    press.id, state: refusal == nil ? .done : .refused, status: refusal?.status,
                    detail: refusal?.detail, at: now)
            }
            metrics.add(
                "action_presses_total",
                labels: ["action": press.binding.kind.rawValue, "outcome": refusal == nil ? "done" : "refused"])
            guard let refusal else {
                log.notice("GitHub took the action", metadata)
                return
            }
            metadata["error"] = .string(refusal.detail)
            log.error("GitHub refused an action asked from a phone; the card and an alert say so", metadata)
            await service.step("saying GitHub's refusal on the card", at: now) { turn in
                try turn.engine.noteAction(
                    press.binding.kind, on: press.binding.run,
                    text: "\(press.binding.kind.failedHeadline): \(refusal.detail)",
                    failed: true, at: now, history: turn.history)
                turn.wakesDispatcher = true
            }
        } catch {
            metadata["error"] = .string("\(error)")
            log.error("could not record GitHub's answer to an action", metadata)
        }
    }

    static func metadata(_ binding: ActionBinding, person: String) -> [String: JSONValue] {
        var metadata: [String: JSONValue] = [
            "action": .string(binding.kind.rawValue), "github.repository": .string(binding.run.repository),
            "run.id": .number(Double(binding.run.runID)), "run.attempt": .number(Double(binding.run.attempt)),
            "action.person": .string(person), "action.surface": .string(binding.surface),
        ]
        if let environment = binding.environment { metadata["action.environment"] = .string(environment) }
        return metadata
    }

    /// Presses a stop cut off before GitHub answered: recorded `interrupted` and said once, never
    /// asked again (GitHub may have done them). `instance`: only the presses this instance
    /// recorded (several share a PostgreSQL database, and another's may be under way); nil: all
    /// (SQLite, one instance). Run by the store's service as it starts.
    static func interruptCutOffPresses(
        in service: isolated BridgeService, recordedBy instance: String?, logger: Logger, at now: UnixTime
    ) {
        do {
            let records = try service.turn("marking the presses a stop cut off", at: now, writer: .anyInstance) {
                try $0.database.interruptRequestedActions(recordedBy: instance, at: now)
            }
            for record in records {
                logger.warning(
                    "an action asked from a phone was cut off by a stop before GitHub answered; it is not asked again",
                    [
                        "action": .string(record.kind.rawValue), "run": .string(record.run.description),
                        "action.person": .string(record.person),
                    ])
            }
        } catch {
            logger.error("could not read the presses cut off by the last stop", ["error": .string("\(error)")])
        }
    }
}
