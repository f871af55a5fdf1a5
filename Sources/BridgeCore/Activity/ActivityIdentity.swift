/// Which card a run draws on: its slug and the activity's name.
public struct ActivityIdentity: Sendable, Hashable, Codable {
    public var slug: String
    public var name: String

    public init(slug: String, name: String) {
        self.slug = slug
        self.name = name
    }

    /// Repository scope: `gh-` + the first 8 hex characters of SHA-256 of `owner/repo`, named
    /// `GitHub: <repo>` — the scheme of the existing PushWard GitHub integration. Workflow scope
    /// appends 8 hex characters of the workflow's name, so each workflow keeps its own stable card.
    public static func forRun(repository: Repository, workflow: String?, scope: ActivitySettings.Scope)
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
