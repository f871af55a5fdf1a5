/// One `actions.rules` entry: which buttons the runs it covers offer. Every list is a set of `*`
/// globs that must match (empty, or `["*"]`, matches everything); the first rule that covers a
/// run decides, so a narrow rule with `"offer": []` placed first takes buttons away from a few
/// repositories.
public struct ActionRule: Sendable, Equatable {
    /// What `offer` may name: `approve` brings its `reject` button along.
    public static let offerNames = ["rerun", "cancel", "approve"]

    public var offer: Set<ActionKind>
    public var repositories: [GlobPattern]
    public var workflows: [GlobPattern]
    public var branches: [GlobPattern]
    /// The GitHub logins (lower-cased) who may approve or reject a deployment review from a phone:
    /// Approve and Reject go to each of them on a notification of their own (never to the run's
    /// own actor), with tokens of their own, and to no one else.
    public var approvers: [String]

    public init(
        offer: Set<ActionKind>, repositories: [GlobPattern] = [], workflows: [GlobPattern] = [],
        branches: [GlobPattern] = [], approvers: [String] = []
    ) {
        self.offer = offer.contains(.approve) ? offer.union([.reject]) : offer.subtracting([.reject])
        self.repositories = repositories
        self.workflows = workflows
        self.branches = branches
        self.approvers = approvers.map { $0.lowercased() }
    }

    /// Whether the rule covers the run. A value the payloads did not carry matches only a list
    /// that matches everything. No rule covers a run not known to be the repository's own: a
    /// fork's author chose the branch and workflow names the globs read (SECURITY.md, "Forks").
    public func covers(_ run: AlertSubject) -> Bool {
        run.origin.isBase && GlobPattern.any(repositories, match: run.repository)
            && GlobPattern.any(workflows, match: run.workflow)
            && GlobPattern.any(branches, match: run.branch)
    }
}
