/// What `github hooks` does about one repository's or organisation's webhooks, decided from
/// GitHub's list alone (no clock, no I/O): create the bridge's hook, fix just what is wrong with
/// it, or nothing.
///
/// Fixes keep whatever else the hook has (its other events stay, its URL and name are not
/// touched), except `*`, every event, which is narrowed to the two the bridge reads. A fix that changes `config` sends the whole of it, secret included: GitHub replaces
/// `config` as a whole, so a PATCH without `secret` would leave the hook with none.
public struct HookPlan: Sendable, Equatable {
    /// The events the bridge reads.
    public static let events = ["workflow_job", "workflow_run"]

    public enum Action: Sendable, Equatable {
        /// `POST …/hooks` with this body.
        case create(JSONValue)
        /// `PATCH …/hooks/{id}` with this body.
        case update(id: Int, JSONValue)
        /// The hook is right: nothing is written.
        case none
    }

    /// The hook posting to the URL (the first, when several do), nil when none does.
    public var hook: WebhookHook?
    /// What is wrong with it, in a fixed order; `[.missing]` when there is none.
    public var problems: [HookProblem]
    public var action: Action

    /// - Parameters:
    ///   - hooks: every hook GitHub listed here.
    ///   - url: the URL the bridge's hook must post to.
    ///   - secret: the secret it must sign with (the first of `webhook_secrets`).
    public init(hooks: [WebhookHook], url: String, secret: String) {
        guard let hook = hooks.first(where: { $0.url == url }) else {
            self.hook = nil
            problems = [.missing]
            action = .create(Self.creation(url: url, secret: secret))
            return
        }
        self.hook = hook
        problems = Self.problems(of: hook)
        var patch: [String: JSONValue] = [:]
        if !hook.active { patch["active"] = true }
        let missing = Self.events.filter { !hook.delivers($0) }
        if hook.events.contains("*") {
            // Narrowed to what the bridge reads: `*` in place of the other events it would keep.
            patch["events"] = .array(Self.events.map { .string($0) })
        } else if !missing.isEmpty {
            patch["events"] = .array((hook.events + missing).map { .string($0) })
        }
        if hook.contentType != "json" || hook.insecureSSL != "0" || !hook.hasSecret {
            patch["config"] = Self.config(url: url, secret: secret)
        }
        action = patch.isEmpty ? .none : .update(id: hook.id, .object(patch))
    }

    /// What is wrong with `hook` as a hook of the bridge's.
    public static func problems(of hook: WebhookHook) -> [HookProblem] {
        var problems: [HookProblem] = []
        if !hook.active { problems.append(.inactive) }
        for event in events where !hook.delivers(event) { problems.append(.missingEvent(event)) }
        if hook.events.contains("*") { problems.append(.tooWide) }
        if hook.contentType != "json" { problems.append(.formContentType) }
        if hook.insecureSSL != "0" { problems.append(.skipsTLSVerification) }
        if !hook.hasSecret { problems.append(.noSecret) }
        return problems
    }

    /// The body of `POST …/hooks`: GitHub's documented shape, `name` `web` (the only kind).
    public static func creation(url: String, secret: String) -> JSONValue {
        [
            "name": "web", "active": true, "events": .array(events.map { .string($0) }),
            "config": config(url: url, secret: secret),
        ]
    }

    static func config(url: String, secret: String) -> JSONValue {
        ["url": .string(url), "content_type": "json", "secret": .string(secret), "insecure_ssl": "0"]
    }
}
