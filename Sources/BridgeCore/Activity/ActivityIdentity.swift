/// Which card a run draws on: its slug and the activity's name.
public struct ActivityIdentity: Sendable, Hashable, Codable {
    public var slug: String
    public var name: String
    /// Who of the organisation the activity reaches (`routing`); nil: everyone the key reaches.
    /// Sent with the `POST` that creates it; PushWard keeps it through later PATCHes.
    public var target: ActivityTarget?

    public init(slug: String, name: String, target: ActivityTarget? = nil) {
        self.slug = slug
        self.name = name
        self.target = target
    }

    /// Repository scope: `gh-` + the first 8 hex characters of SHA-256 of `owner/repo`, named
    /// `GitHub: <repo>` — the scheme of the existing PushWard GitHub integration. Workflow scope
    /// appends 8 hex characters of the workflow's name, so each workflow keeps its own stable card.
    /// A run routed to a person (`person`: their lower-cased login) gets a card of that person's
    /// own: the slug gains `-u` + 8 hex characters of the login's SHA-256, so two people's runs in
    /// one repository never take each other's card.
    public static func forRun(
        repository: Repository, workflow: String?, scope: ActivitySettings.Scope, person: String? = nil
    ) -> ActivityIdentity {
        let personal = person.map { "-u" + SHA256.hexDigest(of: $0).prefix(8) } ?? ""
        var identity = forRun(repository: repository, workflow: workflow, scope: scope)
        identity.slug += personal
        return identity
    }

    private static func forRun(repository: Repository, workflow: String?, scope: ActivitySettings.Scope)
        -> ActivityIdentity
    {
        let repositorySlug = "gh-" + SHA256.hexDigest(of: repository.fullName).prefix(8)
        switch scope {
        case .repository:
            return ActivityIdentity(slug: repositorySlug, name: "GitHub: " + repository.name)
        case .workflow:
            let workflowName = workflow ?? "workflow"
            return ActivityIdentity(
                slug: repositorySlug + "-" + SHA256.hexDigest(of: workflowName).prefix(8),
                name: ActivityContentBuilder.clip("GitHub: \(repository.name) / \(workflowName)", to: 256))
        }
    }
}
