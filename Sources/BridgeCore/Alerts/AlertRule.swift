/// One `alerts.rules` entry: which runs alert, for which reasons, at which level. Every list is
/// a set of `*` globs that must match (an empty list matches everything, as `["*"]` does);
/// `branches` also takes `{default}`, the repository's default branch.
public struct AlertRule: Sendable, Equatable {
    /// The notification's interruption level; PushWard also knows `passive` and `critical`,
    /// which an alert about CI has no business using.
    public enum Level: String, Sendable, Equatable, CaseIterable {
        case active
        case timeSensitive = "time-sensitive"
    }

    /// The token in `branches` that stands for the repository's default branch.
    public static let defaultBranchToken = "{default}"

    public var when: Set<AlertReason>
    public var repositories: [GlobPattern]
    public var workflows: [GlobPattern]
    public var branches: [GlobPattern]
    public var events: [GlobPattern]
    public var actors: [GlobPattern]
    public var level: Level
    /// Whether the rule also covers runs from forks (`RunOrigin.fork`); false by default, since a
    /// fork's author names its branch and, on `pull_request`, its workflow.
    public var forks: Bool
    /// How long a job stays queued before the rule's `queued` alert goes (`queued_after`).
    public var queuedAfter: UnixTime

    /// `queued_after` when a rule does not say: long past a busy pool's usual wait, hours before
    /// GitHub's 24-hour cancel.
    public static let defaultQueuedAfter: UnixTime = 1_800
    /// What `queued_after` may be, in seconds: a minute to 23 hours (GitHub cancels at 24).
    public static let queuedAfterRange = 60...82_800

    public init(
        when: Set<AlertReason>, repositories: [GlobPattern] = [], workflows: [GlobPattern] = [],
        branches: [GlobPattern] = [], events: [GlobPattern] = [], actors: [GlobPattern] = [], level: Level = .active,
        forks: Bool = false, queuedAfter: UnixTime = AlertRule.defaultQueuedAfter
    ) {
        self.forks = forks
        self.queuedAfter = queuedAfter
        self.when = when
        self.repositories = repositories
        self.workflows = workflows
        self.branches = branches
        self.events = events
        self.actors = actors
        self.level = level
    }

    /// The rule `"alerts": {}` turns on: failures and fixes on the default branch.
    public static let onDefaultBranch = AlertRule(
        when: [.failure, .fixed], branches: [GlobPattern(defaultBranchToken)])

    /// Whether the rule covers `reason` for this run. A value the payloads did not carry matches
    /// only a list that matches everything; an unknown default branch is taken to be `main` or
    /// `master`, the two GitHub has ever created. A fork's run is covered only with `forks`, and
    /// then never by `{default}`: a fork's `main` is not the repository's default branch. A
    /// `queued` alert is covered once the job has been queued the rule's `queuedAfter`.
    public func matches(_ reason: AlertReason, _ run: AlertSubject) -> Bool {
        guard when.contains(reason) else { return false }
        if reason == .queued, (run.queuedFor ?? -1) < queuedAfter { return false }
        if case .fork = run.origin, !forks { return false }
        return GlobPattern.any(repositories, match: run.repository) && GlobPattern.any(workflows, match: run.workflow)
            && GlobPattern.any(events, match: run.event) && GlobPattern.any(actors, match: run.actor)
            && matchesBranch(run)
    }

    private func matchesBranch(_ run: AlertSubject) -> Bool {
        let branch = run.branch
        guard !branches.isEmpty else { return true }
        return branches.contains { pattern in
            if pattern.pattern == Self.defaultBranchToken {
                guard let branch, run.origin.forkName == nil else { return false }
                return run.defaultBranch.map { $0 == branch } ?? ["main", "master"].contains(branch)
            }
            return branch.map(pattern.matches) ?? (pattern.pattern == "*")
        }
    }

}
