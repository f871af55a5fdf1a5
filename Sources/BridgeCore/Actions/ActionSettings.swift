/// The `actions` section: buttons on cards and notifications that act on GitHub from the phone.
/// Off unless present; present, it needs `github.api` (with write access) and `public_url`.
public struct ActionSettings: Sendable, Equatable {
    /// Where phones reach the webhook listener, without a trailing `/`: buttons point at
    /// `<public_url>/actions/<token>`.
    public var publicURL: String
    /// How long a button's token stays valid, in seconds (at least 10).
    public var tokenTTL: Int
    /// Whether notification actions ask for Face ID or the passcode first (PushWard's
    /// `authentication_required`). Card buttons and approval options have no such flag.
    public var requireAuthentication: Bool
    /// Without `rules`, every run offers Re-run and Cancel; Approve needs a rule naming its
    /// `approvers`.
    public var rules: [ActionRule]

    public static let defaultTokenTTL = 3_600
    public static let minimumTokenTTL = 10

    public init(
        publicURL: String, tokenTTL: Int = defaultTokenTTL, requireAuthentication: Bool = true,
        rules: [ActionRule] = [ActionRule(offer: [.rerun, .cancel])]
    ) {
        self.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        self.tokenTTL = tokenTTL
        self.requireAuthentication = requireAuthentication
        self.rules = rules
    }

    /// The buttons `run` offers: those of the first rule that covers it, none without one.
    public func offers(for run: AlertSubject) -> Set<ActionKind> {
        rules.first { $0.covers(run) }?.offer ?? []
    }

    /// Who may approve `run`'s deployment reviews: the approvers of the first rule that covers it.
    public func approvers(for run: AlertSubject) -> [String] {
        rules.first { $0.covers(run) }?.approvers ?? []
    }

    /// The URL a button carries until the daemon puts a token in it: `<public_url>/actions/{rerun}`.
    /// It is what the core's content holds, what PushWard's acknowledged content is compared
    /// with, and what the status page shows, so no token is ever stored outside its own table.
    public func placeholderURL(_ kind: ActionKind) -> String {
        publicURL + Self.pathPrefix + "{" + kind.rawValue + "}"
    }

    /// The path every button's URL has on the webhook listener.
    public static let pathPrefix = "/actions/"

    /// The action a placeholder URL stands for, or nil for any other string.
    public func kind(ofPlaceholder url: String) -> ActionKind? {
        let prefix = publicURL + Self.pathPrefix + "{"
        guard url.hasPrefix(prefix), url.hasSuffix("}") else { return nil }
        return ActionKind(rawValue: String(url.dropFirst(prefix.count).dropLast()))
    }

    /// A card button (`secondary_url_action`): every button is a `POST`.
    public func cardButton(_ kind: ActionKind) -> JSONValue {
        ["url": .string(placeholderURL(kind)), "title": .string(kind.title), "method": "POST"]
    }

    /// A notification action: a silent `POST` fired by the phone (PushWard's kind 2), behind Face ID
    /// unless `require_authentication` is off; reject and cancel are drawn as destructive.
    public func notificationAction(_ kind: ActionKind) -> JSONValue {
        var action: [String: JSONValue] = [
            "id": .string(kind.rawValue), "title": .string(kind.title), "url": .string(placeholderURL(kind)),
            "method": "POST", "authentication_required": .bool(requireAuthentication),
        ]
        if kind == .reject || kind == .cancel { action["destructive"] = true }
        return .object(action)
    }
}
