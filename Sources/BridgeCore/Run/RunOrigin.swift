/// Where a run's commit comes from, as far as the deliveries tell: the run's own repository, a
/// fork of it, or not known yet.
///
/// A fork's author picks the head branch's name (most forks push from their own `main`) and, for
/// a `pull_request` run, writes the workflow and job names too; so a branch or workflow glob says
/// nothing about a fork's run. Rules cover one only when they say `"forks": true`, it never gets
/// a button that acts on GitHub, and its "fixed" alerts and alert replacement stay apart from the
/// repository's own (SECURITY.md, "Forks").
public enum RunOrigin: Sendable, Hashable {
    /// `head_repository` is the run's repository.
    case base
    /// `head_repository` is another repository: its `owner/name`, as the payload spelt it.
    case fork(headRepository: String)
    /// No `workflow_run` delivery or lookup has said yet (only `workflow_job` deliveries, which
    /// carry no head repository), or it said nothing for a pull request run (a deleted fork).
    /// Treated as a fork for everything that acts or replaces, as the base for what is shown.
    case unknown

    /// The origin of `run` of `repository`. A run without `head_repository` is the repository's
    /// own unless a pull request triggered it: GitHub sends `null` when the fork was deleted, and
    /// senders that lack the field (Gitea, old recordings) run only the repository's own code
    /// outside pull requests.
    public static func of(_ run: WorkflowRun?, repository: String) -> RunOrigin {
        guard let run else { return .unknown }
        guard let head = run.headRepository else {
            return (run.event ?? "").hasPrefix("pull_request") ? .unknown : .base
        }
        // GitHub's names are case-insensitive; the payload spells both the same way, but a sender
        // that does not must not turn the repository's own run into a fork.
        return head.lowercased() == repository.lowercased() ? .base : .fork(headRepository: head)
    }

    /// The fork's `owner/name`; nil for the base and an unknown origin.
    public var forkName: String? {
        if case .fork(let name) = self { return name }
        return nil
    }

    /// Whether the run is known to be the repository's own: the only origin that gets buttons,
    /// "fixed" alerts and the repository's alert replacement.
    public var isBase: Bool { self == .base }

    /// The longest fork name shown: GitHub allows 39 characters of owner and 100 of name.
    public static let nameLimit = 140

    /// "from mallory/rocket" for a fork, made plain (no control or bidirectional characters) and
    /// cut to `nameLimit`; nil otherwise. Every surface that names a fork uses this text.
    public var fromText: String? {
        guard let name = forkName else { return nil }
        return "from " + CardText.fitted(name, to: Self.nameLimit)
    }
}
