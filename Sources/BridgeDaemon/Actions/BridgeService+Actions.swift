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

    /// An alert's body as it goes on the wire: each action's placeholder URL replaced by a fresh
    /// token bound to the run (and, for a review, the environment it waits on).
    public func armed(_ alert: AlertRecord, body: JSONValue, at now: UnixTime) -> JSONValue {
        guard let actions = configuration.actions, var object = body.objectValue,
            let list = object["actions"]?.arrayValue
        else { return body }
        _ = try? engine.actionSubject(alert.run, history: StoreHistory(database))
        var minted: [(ActionToken, ActionBinding)] = []
        let armed = list.map { action -> JSONValue in
            guard var fields = action.objectValue,
                let kind = fields["url"]?.stringValue.flatMap(actions.kind(ofPlaceholder:))
            else { return action }
            let environment = kind == .approve || kind == .reject ? engine.waitingEnvironment(of: alert.run) : nil
            let token = ActionToken.mint()
            minted.append(
                (token, binding(kind, run: alert.run, environment: environment, surface: "alert \(alert.id)", at: now)))
            fields["url"] = .string(actions.publicURL + ActionSettings.pathPrefix + token.text)
            return .object(fields)
        }
        guard !minted.isEmpty else { return body }
        // Without their tokens the actions could only answer 404: the alert goes out without them.
        object["actions"] = record(minted, at: now) ? .array(armed) : nil
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

    private func binding(
        _ kind: ActionKind, run: RunKey, environment: String?, surface: String, at now: UnixTime
    ) -> ActionBinding {
        let recipient = engine.runs[run].map { engine.recipient(of: $0).description } ?? nil
        return ActionBinding(
            kind: kind, run: run, environment: environment, recipient: recipient, surface: surface, createdAt: now,
            expiresAt: now + Double(configuration.actions?.tokenTTL ?? ActionSettings.defaultTokenTTL))
    }

    /// Commits the tokens; false (logged) when the store would not take them: the request then goes
    /// without those buttons rather than with a token nothing knows.
    private func record(_ minted: [(ActionToken, ActionBinding)], at now: UnixTime) -> Bool {
        do {
            try database.write { database in
                for (token, binding) in minted {
                    try database.insertActionToken(
                        selector: token.selector, verifierHash: token.verifierHash, binding: binding)
                }
            }
            metrics.add("action_tokens_minted_total", Double(minted.count))
            return true
        } catch {
            logger.error(
                "could not record a button's token; the update goes out without the button",
                ["error": .string("\(error)")])
            return false
        }
    }

    // MARK: Pressing

    public enum PressAnswer: Sendable, Equatable {
        /// Unknown, used, expired, forged, or for a run where the action no longer makes sense:
        /// nothing was done, and the answer does not say which.
        case notFound
        case accepted(ActionPress)
    }

    /// A press of the button carrying `token`: the token is spent (with every copy bound to the
    /// same action) and the press recorded before anything is asked of GitHub, so a replay, a
    /// crash or a second copy can never ask twice.
    func press(_ token: ActionToken, at now: UnixTime) -> PressAnswer {
        do {
            guard let (binding, hash) = try database.liveActionToken(selector: token.selector, at: now),
                token.matches(hash)
            else {
                metrics.add("action_presses_total", labels: ["action": "unknown", "outcome": "not_found"])
                return .notFound
            }
            let state = try engine.actionSubject(binding.run, history: StoreHistory(database))
            let problem = engine.actionProblem(
                binding.kind, on: binding.run, environment: binding.environment,
                newerAttemptStored: try database.hasNewerAttempt(than: binding.run))
            let person = state.map { engine.recipient(of: $0).description } ?? nil
            let presser = person ?? Self.unknownPresser
            let id = try database.write { database in
                try database.spendActionTokens(like: binding, at: now)
                return try database.insertAction(
                    binding, person: presser, state: problem == nil ? .requested : .notApplicable, detail: problem,
                    at: now)
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
            try engine.noteAction(
                binding.kind, on: binding.run,
                text: binding.kind.requested(by: state.flatMap { engine.recipient(of: $0).person }),
                failed: false, at: now, history: StoreHistory(database))
            persistChanges(at: now)
            wakeups.signal()
            return .accepted(ActionPress(id: id, binding: binding, person: presser))
        } catch {
            logger.error("could not check a pressed button; nothing done", ["error": .string("\(error)")])
            return .notFound
        }
    }

    /// Records GitHub's answer to a press; a refusal is said on the card and in an alert.
    func finishPress(_ press: ActionPress, refusal: (status: Int?, detail: String)?, at now: UnixTime) {
        var metadata = Self.metadata(press.binding, person: press.person)
        do {
            try database.write { database in
                try database.finishAction(
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
            try engine.noteAction(
                press.binding.kind, on: press.binding.run,
                text: "\(press.binding.kind.failedHeadline): \(refusal.detail)",
                failed: true, at: now, history: StoreHistory(database))
            persistChanges(at: now)
            wakeups.signal()
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
