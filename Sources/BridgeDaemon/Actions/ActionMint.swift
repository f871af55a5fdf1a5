import BridgeCore
import BridgeStore
import Foundation

/// Buttons that act on GitHub (`actions`), as requests go out: each button's placeholder URL is
/// replaced by a fresh token, recorded in a leader's turn before the request is sent. The card's
/// state (and `pushes`) keep the placeholder, so the merge-patch diff, the status page and
/// `explain` never hold a token. Built with the dispatcher, which arms what it sends.
public struct ActionMint: Sendable {
    public let service: BridgeService
    let actions: ActionSettings
    let log: Logger
    let metrics: Metrics

    public init(service: BridgeService, actions: ActionSettings, logger: Logger, metrics: Metrics) {
        self.service = service
        self.actions = actions
        self.log = logger
        self.metrics = metrics
    }

    /// `planned` as it goes on the wire. A PATCH to a card whose button PushWard already shows,
    /// when that button's newest token is past half its life, carries the button again with a new
    /// token: a long run keeps a live Cancel without a push of its own. Without its token a button
    /// could only answer 404: when the tokens cannot be recorded, the request goes without them.
    /// Most requests carry no button to arm: only one that does opens a turn.
    public func armed(_ planned: PlannedRequest, at now: UnixTime) async -> PushWardRequest {
        let (request, minted) = await service.read { database, engine in
            arm(planned, database: database, engine: engine, at: now)
        }
        guard !minted.isEmpty else { return request }
        do {
            try await service.turn("minting a button's token", at: now) { turn in try record(minted, in: turn) }
            metrics.add("action_tokens_minted_total", Double(minted.count))
            return request
        } catch {
            if !(error is LeadLost) { sayUnrecorded(error) }
            return withoutButtons(planned.request)
        }
    }

    /// The armed request, and the tokens it carries, still to be recorded.
    private func arm(
        _ planned: PlannedRequest, database: BridgeDatabase, engine: borrowing BridgeEngine, at now: UnixTime
    ) -> (PushWardRequest, [(ActionToken, ActionBinding)]) {
        guard var body = planned.request.body.objectValue else { return (planned.request, []) }
        var content = body["content"]?.objectValue ?? [:]
        if planned.request.method == .patch, content["secondary_url_action"] == nil,
            let shown = engine.sessions[planned.request.slug]?.acknowledged?.content["secondary_url_action"],
            let kind = shown["url"]?.stringValue.flatMap(actions.kind(ofPlaceholder:)),
            buttonWantsNewToken(kind, run: planned.run, database: database, at: now)
        {
            content["secondary_url_action"] = shown
        }
        var minted: [(ActionToken, ActionBinding)] = []
        for field in Self.buttonFields {
            guard var button = content[field]?.objectValue,
                let kind = button["url"]?.stringValue.flatMap(actions.kind(ofPlaceholder:))
            else { continue }
            let token = ActionToken.mint()
            minted.append(
                (
                    token,
                    binding(
                        kind, run: planned.run, environment: nil, surface: "card \(planned.request.slug)",
                        engine: engine, at: now)
                ))
            button["url"] = .string(actions.publicURL + ActionSettings.pathPrefix + token.text)
            content[field] = .object(button)
        }
        guard !minted.isEmpty else { return (planned.request, []) }
        body["content"] = .object(content)
        var request = planned.request
        request.body = .object(body)
        return (request, minted)
    }

    /// The fields of a card's content that hold a button.
    static let buttonFields = ["url_action", "secondary_url_action", "tap_action"]

    /// `request` without the buttons whose tokens could not be recorded.
    private func withoutButtons(_ request: PushWardRequest) -> PushWardRequest {
        guard var body = request.body.objectValue, var content = body["content"]?.objectValue else { return request }
        for field in Self.buttonFields
        where content[field]?["url"]?.stringValue.flatMap(actions.kind(ofPlaceholder:)) != nil {
            content[field] = nil
        }
        body["content"] = .object(content)
        var stripped = request
        stripped.body = .object(body)
        return stripped
    }

    /// Whether arming `alert` needs GitHub's pending deployments first (`Dispatcher` asks them):
    /// it carries a review button and no delivery named the environment its job waits on.
    public func reviewNeedsPendingDeployments(_ alert: AlertRecord, body: JSONValue) async -> Bool {
        let asksReview =
            body["actions"]?.arrayValue?.contains { action in
                action["url"]?.stringValue.flatMap(actions.kind(ofPlaceholder:)).map(ActionPresses.isReview) ?? false
            } ?? false
        guard asksReview else { return false }
        return
            (try? await service.turn("reading a review's run", at: Date().timeIntervalSince1970) { turn in
                _ = try? turn.engine.actionSubject(alert.run, history: turn.history)
                return turn.engine.reviewNeedsPendingDeployments(alert.run)
            }) ?? false
    }

    /// An alert's body as it goes on the wire: each action's placeholder URL replaced by a fresh
    /// token bound to the run and, for a review, to the one environment it answers
    /// (`BridgeEngine.reviewEnvironment`, with `pending`: the environments GitHub listed as
    /// waiting, when it was asked). Without a known environment the review's actions are left
    /// off: a token bound to none could only answer 404, or approve something nobody named.
    public func armed(_ alert: AlertRecord, body: JSONValue, pending: [String]? = nil, at now: UnixTime) async
        -> JSONValue
    {
        guard var object = body.objectValue, let list = object["actions"]?.arrayValue, !list.isEmpty else {
            return body
        }
        do {
            let (armedBody, count) = try await service.turn("minting a button's token", at: now) {
                turn throws -> (JSONValue, Int) in
                var armed: [JSONValue] = []
                _ = try? turn.engine.actionSubject(alert.run, history: turn.history)
                let environment = turn.engine.reviewEnvironment(of: alert.run, pending: pending)
                var minted: [(ActionToken, ActionBinding)] = []
                for action in list {
                    guard var fields = action.objectValue,
                        let kind = fields["url"]?.stringValue.flatMap(actions.kind(ofPlaceholder:))
                    else {
                        armed.append(action)
                        continue
                    }
                    let review = ActionPresses.isReview(kind)
                    if review && environment == nil { continue }
                    let token = ActionToken.mint()
                    minted.append(
                        (
                            token,
                            binding(
                                kind, run: alert.run, environment: review ? environment : nil,
                                surface: "alert \(alert.id)",
                                recipient: alert.recipient.isEmpty ? nil : alert.recipient,
                                engine: turn.engine, at: now)
                        ))
                    fields["url"] = .string(actions.publicURL + ActionSettings.pathPrefix + token.text)
                    armed.append(.object(fields))
                }
                if armed.count < list.count {
                    turn.log.warning(
                        "a review notification goes without Approve and Reject: no delivery named the environment its job waits on, and GitHub's pending deployments did not name exactly one",
                        [
                            "run": .string(alert.run.description),
                            "github.pending": pending.map { .array($0.map { .string($0) }) } ?? .null,
                        ])
                }
                if !minted.isEmpty { try record(minted, in: turn) }
                object["actions"] = armed.isEmpty ? nil : .array(armed)
                return (.object(object), minted.count)
            }
            if count > 0 { metrics.add("action_tokens_minted_total", Double(count)) }
            return armedBody
        } catch {
            // Without their tokens the actions could only answer 404: the alert goes out without them.
            if !(error is LeadLost) { sayUnrecorded(error) }
            object["actions"] = nil
            let kept = list.filter { $0["url"]?.stringValue.flatMap(actions.kind(ofPlaceholder:)) == nil }
            if !kept.isEmpty { object["actions"] = .array(kept) }
            return .object(object)
        }
    }

    /// Whether the newest live token of the button PushWard shows is gone or past half its life.
    private func buttonWantsNewToken(_ kind: ActionKind, run: RunKey, database: BridgeDatabase, at now: UnixTime)
        -> Bool
    {
        do {
            let expiry = try database.liveTokenExpiry(kind, run: run, at: now)
            return (expiry ?? 0) < now + Double(actions.tokenTTL) / 2
        } catch {
            return false
        }
    }

    /// `recipient`: whose notification carries the token (a review's approver); else the run's own
    /// recipient under routing.
    private func binding(
        _ kind: ActionKind, run: RunKey, environment: String?, surface: String, recipient approver: String? = nil,
        engine: borrowing BridgeEngine, at now: UnixTime
    ) -> ActionBinding {
        let recipient = approver ?? engine.runs[run].map { engine.recipient(of: $0).description } ?? nil
        return ActionBinding(
            kind: kind, run: run, environment: environment, recipient: recipient, surface: surface, createdAt: now,
            expiresAt: now + Double(actions.tokenTTL))
    }

    /// Inserts the tokens in the turn. Only the leader mints (its dispatcher sends), so a deposed
    /// leader's tokens are never stored, and it steps down.
    private func record(_ minted: [(ActionToken, ActionBinding)], in turn: borrowing ServiceTurn) throws {
        for (token, binding) in minted {
            try turn.database.insertActionToken(
                selector: token.selector, verifierHash: token.verifierHash, binding: binding)
        }
    }

    private func sayUnrecorded(_ error: any Error) {
        log.error(
            "could not record a button's token; the update goes out without the button", ["error": .string("\(error)")])
    }
}
