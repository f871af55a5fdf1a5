/// Where a webhook lives: a repository or an organisation (`github hooks --repo` / `--org`, and
/// the places recovery looks for the bridge's hooks).
public enum HookOwner: Sendable, Hashable, CustomStringConvertible {
    case repository(owner: String, name: String)
    case organization(String)

    /// `OWNER/NAME` for `--repo`; nil unless both parts are GitHub names (letters, digits, `-`,
    /// `_`, `.`; not `.` or `..`), so a path built from them needs no escaping.
    public init?(repository text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, Self.isName(parts[0]), Self.isName(parts[1]) else { return nil }
        self = .repository(owner: parts[0], name: parts[1])
    }

    /// `ORG` for `--org`, under the same rule.
    public init?(organization text: String) {
        guard Self.isName(text) else { return nil }
        self = .organization(text)
    }

    static func isName(_ text: String) -> Bool {
        !text.isEmpty && text != "." && text != ".."
            && text.unicodeScalars.allSatisfy { GitHubAPISettings.Hook.segmentCharacters.contains($0) }
    }

    /// The REST path the hooks are under: `/repos/acme/rocket/hooks`, `/orgs/acme/hooks`.
    public var hooksPath: String {
        switch self {
        case .repository(let owner, let name): "/repos/\(owner)/\(name)/hooks"
        case .organization(let organization): "/orgs/\(organization)/hooks"
        }
    }

    /// The `github.api.hooks` entry of hook `id` here, whose delivery log recovery reads.
    public func hook(id: Int) -> GitHubAPISettings.Hook {
        switch self {
        case .repository(let owner, let name): .repository(owner: owner, name: name, id: id)
        case .organization(let organization): .organization(organization, id: id)
        }
    }

    /// The account whose credentials (an App's installation) act here.
    public var account: String {
        switch self {
        case .repository(let owner, _): owner
        case .organization(let organization): organization
        }
    }

    /// `owner/name` for a repository, nil for an organisation.
    public var repository: String? {
        switch self {
        case .repository(let owner, let name): "\(owner)/\(name)"
        case .organization: nil
        }
    }

    /// What GitHub wants of a credential to read and write hooks here, named as GitHub's
    /// settings pages name it: said with every 403 and 404, which is how GitHub answers a
    /// credential without it (404 for a repository it will not admit exists to it).
    public var permissionNeeded: String {
        switch self {
        case .repository:
            "the repository permission \"Webhooks: read and write\" (a fine-grained token or a GitHub App, "
                + "whose user must be an admin of the repository) or the admin:repo_hook scope (a classic token)"
        case .organization:
            "the organisation permission \"Webhooks: read and write\" (a fine-grained token or a GitHub App, "
                + "whose user must be an owner of the organisation) or the admin:org_hook scope (a classic token)"
        }
    }

    /// As `check-config`, logs and `--json` spell it: `repos/acme/rocket`, `orgs/acme`.
    public var description: String {
        switch self {
        case .repository(let owner, let name): "repos/\(owner)/\(name)"
        case .organization(let organization): "orgs/\(organization)"
        }
    }
}
