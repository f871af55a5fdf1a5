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

    public init(
        when: Set<AlertReason>, repositories: [GlobPattern] = [], workflows: [GlobPattern] = [],
        branches: [GlobPattern] = [], events: [GlobPattern] = [], actors: [GlobPattern] = [], level: Level = .active
    ) {
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
    /// `master`, the two GitHub has ever created.
    public func matches(_ reason: AlertReason, _ run: AlertSubject) -> Bool {
        guard when.contains(reason) else { return false }
        return GlobPattern.any(repositories, match: run.repository) && GlobPattern.any(workflows, match: run.workflow)
            && GlobPattern.any(events, match: run.event) && GlobPattern.any(actors, match: run.actor)
            && matchesBranch(run.branch, defaultBranch: run.defaultBranch)
    }

    private func matchesBranch(_ branch: String?, defaultBranch: String?) -> Bool {
        guard !branches.isEmpty else { return true }
        return branches.contains { pattern in
            if pattern.pattern == Self.defaultBranchToken {
                guard let branch else { return false }
                return defaultBranch.map { $0 == branch } ?? ["main", "master"].contains(branch)
            }
            return branch.map(pattern.matches) ?? (pattern.pattern == "*")
        }
    }

}
