import BridgeCore
import BridgeStore
import Foundation

/// A press that found a live token and a run where the action makes sense: recorded as
/// `requested`, to be asked of GitHub and finished with `finishPress`.
public struct ActionPress: Sendable, Equatable {
    public var id: Int64
    public var binding: ActionBinding
    /// Who pressed, as the audit names them: the routed person, the routing target, or everyone
    /// the key reaches.
    public var person: String
}

/// Buttons that act on GitHub (`actions`): tokens minted into outgoing requests, and presses
/// checked, recorded and shown. The GitHub call itself is `ActionDesk`'s, outside the store's queue.
extension BridgeService {
    /// What the audit says when routing does not know who held the phone.
    static let unknownPresser = "anyone the key reaches"

    /// Approve and Reject: buttons that go to the approvers (`Reviewer`).
    static func isReview(_ kind: ActionKind) -> Bool { kind == .approve || kind == .reject }

    /// The GitHub login a review's recipient names; nil for the notification that stood for every
    /// approver ("the key's owner, one of …").
    static func login(_ recipient: String) -> String? {
        recipient.contains(" ") ? nil : recipient
    }

    // MARK: Minting

    /// `planned` as it goes on the wire: each button's placeholder URL replaced by a fresh token,
    /// recorded before it is sent. The card's state (and `pushes`) keep the placeholder, so the
    /// merge-patch diff, the status page and `explain` never hold a token.
    ///
    /// A PATCH to a card whose button PushWard already shows, when that button's newest token is
    /// past half its life, carries the button again with a new token: a long run keeps a live
    /// Cancel without a push of its own.
    public func armed(_ planned: PlannedRequest, at now: UnixTime) -> PushWardRequest {
        guard let actions = configuration.actions, var body = planned.request.body.objectValue else {
            return planned.request
        }
        var content = body["content"]?.objectValue ?? [:]
        if planned.request.method == .patch, content["secondary_url_action"] == nil,
            let shown = engine.sessions[planned.request.slug]?.acknowledged?.content["secondary_url_action"],
            let kind = shown["url"]?.stringValue.flatMap(actions.kind(ofPlaceholder:)),
            buttonWantsNewToken(kind, run: planned.run, ttl: actions.tokenTTL, at: now)
        {
            content["secondary_url_action"] = shown
        }
        var minted: [(ActionToken, ActionBinding)] = []
        for field in ["url_action", "secondary_url_action", "tap_action"] {
            guard var button = content[field]?.objectValue,
                let kind = button["url"]?.stringValue.flatMap(actions.kind(ofPlaceholder:))
            else { continue }
            let token = ActionToken.mint()
            minted.append(
                (
                    token,
                    binding(kind, run: planned.run, environment: nil, surface: "card \(planned.request.slug)", at: now)
                ))
            button["url"] = .string(actions.publicURL + ActionSettings.pathPrefix + token.text)
            content[field] = .object(button)
        }
        guard !minted.isEmpty else { return planned.request }
        if !record(minted, at: now) {
            // Without its token a button could only answer 404: it goes out without the button.
            for field in ["url_action", "secondary_url_action", "tap_action"]
            where content[field]?["url"]?.stringValue?.hasPrefix(actions.publicURL + ActionSettings.pathPrefix) == true
            {
                content[field] = nil
            }
        }
        body["content"] = .object(content)
        var request = planned.request
        request.body = .object(body)
        return request
    }

    /// Whether arming `alert` needs GitHub's pending deployments first (`Dispatcher` asks them):
    /// it carries a review button and no delivery named the environment its job waits on.
    public func reviewNeedsPendingDeployments(_ alert: AlertRecord, body: JSONValue) -> Bool {
        guard let actions = configuration.actions, let list = body["actions"]?.arrayValue else { return false }
        let asksReview = list.contains { action in
            action["url"]?.stringValue.flatMap(actions.kind(ofPlaceholder:)).map { $0 == .approve || $0 == .reject }
                ?? false
        }
        guard asksReview else { return false }
        _ = try? engine.actionSubject(alert.run, history: StoreHistory(database))
        return engine.reviewNeedsPendingDeployments(alert.run)
    }

    /// An alert's body as it goes on the wire: each action's placeholder URL replaced by a fresh
    /// token bound to the run and, for a review, to the one environment it answers
    /// (`BridgeEngine.reviewEnvironment`, with `pending`: the environments GitHub listed as
    /// waiting, when it was asked). Without a known environment the review's actions are left
    /// off: a token bound to none could only answer 404, or approve something nobody named.
    public func armed(_ alert: AlertRecord, body: JSONValue, pending: [String]? = nil, at now: UnixTime) -> JSONValue {
        guard let actions = configuration.actions, var object = body.objectValue,
            let list = object["actions"]?.arrayValue, !list.isEmpty
        else { return body }
        _ = try? engine.actionSubject(alert.run, history: StoreHistory(database))
        let environment = engine.reviewEnvironment(of: alert.run, pending: pending)
        var minted: [(ActionToken, ActionBinding)] = []
        var armed: [JSONValue] = []
        for action in list {
            guard var fields = action.objectValue,
                let kind = fields["url"]?.stringValue.flatMap(actions.kind(ofPlaceholder:))
            else {
                armed.append(action)
                continue
            }
            let review = kind == .approve || kind == .reject
            if review && environment == nil { continue }
            let token = ActionToken.mint()
            minted.append(
                (
                    token,
                    binding(
                        kind, run: alert.run, environment: review ? environment : nil, surface: "alert \(alert.id)",
                        recipient: alert.recipient.isEmpty ? nil : alert.recipient, at: now)
                ))
            fields["url"] = .string(actions.publicURL + ActionSettings.pathPrefix + token.text)
            armed.append(.object(fields))
        }
        if armed.count < list.count {
            logger.warning(
                "a review notification goes without Approve and Reject: no delivery named the environment its job waits on, and GitHub's pending deployments did not name exactly one",
                [
                    "run": .string(alert.run.description),
                    "github.pending": pending.map { .array($0.map { .string($0) }) } ?? .null,
                ])
        }
        // Without their tokens the actions could only answer 404: the alert goes out without them.
        if !minted.isEmpty, !record(minted, at: now) {
            armed.removeAll { $0["url"]?.stringValue?.hasPrefix(actions.publicURL + ActionSettings.pathPrefix) == true }
        }
        object["actions"] = armed.isEmpty ? nil : .array(armed)
        return .object(object)
    }

    /// Whether the newest live token of the button PushWard shows is gone or past half its life.
    private func buttonWantsNewToken(_ kind: ActionKind, run: RunKey, ttl: Int, at now: UnixTime) -> Bool {
        do {
            let expiry = try database.liveTokenExpiry(kind, run: run, at: now)
            return (expiry ?? 0) < now + Double(ttl) / 2
        } catch {
            return false
        }
    }

    /// `recipient`: whose notification carries the token (a review's approver); else the run's own
    /// recipient under routing.
    private func binding(
        _ kind: ActionKind, run: RunKey, environment: String?, surface: String, recipient approver: String? = nil,
        at now: UnixTime
    ) -> ActionBinding {
        let recipient = approver ?? engine.runs[run].map { engine.recipient(of: $0).description } ?? nil
        return ActionBinding(
            kind: kind, run: run, environment: environment, recipient: recipient, surface: surface, createdAt: now,
            expiresAt: now + Double(configuration.actions?.tokenTTL ?? ActionSettings.defaultTokenTTL))
    }

    /// Commits the tokens; false (logged) when the store would not take them: the request then goes
    /// without those buttons rather than with a token nothing knows. Only the leader mints (its
    /// dispatcher sends), so the insert carries the fence like every leader write: a deposed
    /// leader's tokens are never stored, and it steps down.
    private func record(_ minted: [(ActionToken, ActionBinding)], at now: UnixTime) -> Bool {
        do {
            try turn("minting a button's token", at: now) { turn in
                for (token, binding) in minted {
                    try turn.database.insertActionToken(
                        selector: token.selector, verifierHash: token.verifierHash, binding: binding)
                }
            }
            metrics.add("action_tokens_minted_total", Double(minted.count))
            return true
        } catch is LeadLost {
            return false
        } catch {
            logger.error(
                "could not record a button's token; the update goes out without the button",
                ["error": .string("\(error)")])
            return false
        }
    }

    // MARK: Pressing

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
    func press(_ token: ActionToken, at now: UnixTime) -> PressAnswer {
        do {
            guard let (binding, state, problem, presser, id) = try spend(token, at: now) else {
                metrics.add("action_presses_total", labels: ["action": "unknown", "outcome": "not_found"])
                return .notFound
            }
            var metadata = Self.metadata(binding, person: presser)
            guard problem == nil else {
                metadata["action.why"] = .string(problem ?? "")
                logger.notice(
                    "a button was pressed for a run where its action no longer applies; nothing done", metadata)
                metrics.add(
                    "action_presses_total", labels: ["action": binding.kind.rawValue, "outcome": "not_applicable"])
                return .notFound
            }
            logger.notice("a button was pressed; asking GitHub", metadata)
            let approver = Self.isReview(binding.kind) ? binding.recipient.flatMap(Self.login) : nil
            step("saying a press on the card", at: now) { turn in
                try turn.engine.noteAction(
                    binding.kind, on: binding.run,
                    text: binding.kind.requested(
                        by: approver ?? state.flatMap { turn.engine.recipient(of: $0).person }),
                    failed: false, at: now, history: turn.history)
                turn.wakesDispatcher = true
            }
            return .accepted(ActionPress(id: id, binding: binding, person: presser))
        } catch {
            logger.error("could not check a pressed button; nothing done", ["error": .string("\(error)")])
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
    private func spend(_ token: ActionToken, at now: UnixTime) throws -> SpentToken? {
        var tries = 0
        while true {
            do {
                return try turn("recording a press", at: now, writer: .anyInstance) { turn -> SpentToken? in
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
    func finishPress(_ press: ActionPress, refusal: (status: Int?, detail: String)?, at now: UnixTime) {
        var metadata = Self.metadata(press.binding, person: press.person)
        do {
            try turn("recording GitHub's answer to a press", at: now, writer: .anyInstance) { turn in
                try turn.database.finishAction(
                    press.id, state: refusal == nil ? .done : .refused, status: refusal?.status,
                    detail: refusal?.detail, at: now)
            }
            metrics.add(
                "action_presses_total",
                labels: ["action": press.binding.kind.rawValue, "outcome": refusal == nil ? "done" : "refused"])
            guard let refusal else {
                logger.notice("GitHub took the action", metadata)
                return
            }
            metadata["error"] = .string(refusal.detail)
            logger.error("GitHub refused an action asked from a phone; the card and an alert say so", metadata)
            step("saying GitHub's refusal on the card", at: now) { turn in
                try turn.engine.noteAction(
                    press.binding.kind, on: press.binding.run,
                    text: "\(press.binding.kind.failedHeadline): \(refusal.detail)",
                    failed: true, at: now, history: turn.history)
                turn.wakesDispatcher = true
            }
        } catch {
            metadata["error"] = .string("\(error)")
            logger.error("could not record GitHub's answer to an action", metadata)
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
}
