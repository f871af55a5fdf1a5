/// One `widgets` entry: a PushWard home-screen widget (`progress` template) that shows the latest
/// run of the runs its globs choose, and stays after the run ends.
public struct WidgetSettings: Sendable, Equatable {
    /// PushWard's widget slug rule: `^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}$`.
    public static let slugLimit = 128
    /// `stale_after` bounds PushWard accepts, in seconds (1 minute to 7 days).
    public static let staleAfterRange = 60...604_800
    /// A day: a repository that runs at least daily never shows stale while the bridge lives, and
    /// a bridge that died shows stale by the next morning. No heartbeat refreshes a widget (every
    /// PATCH costs one of 50 a month), so set it above the longest quiet gap between runs.
    public static let defaultStaleAfter = 86_400

    public var slug: String
    public var name: String
    public var repositories: [GlobPattern]
    public var workflows: [GlobPattern]
    public var branches: [GlobPattern]
    public var staleAfter: Int
    /// Whether the widget also follows runs from forks; false by default: a fork's run on a
    /// branch it named `main` must not paint the repository's "CI on main" widget.
    public var forks: Bool

    public init(
        slug: String, name: String, repositories: [GlobPattern] = [], workflows: [GlobPattern] = [],
        branches: [GlobPattern] = [], staleAfter: Int = defaultStaleAfter, forks: Bool = false
    ) {
        self.forks = forks
        self.slug = slug
        self.name = name
        self.repositories = repositories
        self.workflows = workflows
        self.branches = branches
        self.staleAfter = staleAfter
    }

    /// Whether the widget follows `state`'s run (see `GlobPattern.any`). A run of unknown origin
    /// (no `workflow_run` delivery yet) waits until it is known: the widget's few updates a month
    /// are not spent on a run that may turn out to be a fork's.
    public func follows(_ state: RunState) -> Bool {
        switch state.origin {
        case .base: break
        case .fork: guard forks else { return false }
        case .unknown: return false
        }
        return GlobPattern.any(repositories, match: state.key.repository)
            && GlobPattern.any(workflows, match: state.workflowName)
            && GlobPattern.any(branches, match: state.headBranch)
    }

    /// Whether `slug` is one PushWard takes.
    public static func isValidSlug(_ slug: String) -> Bool {
        let bytes = Array(slug.utf8)
        guard (1...slugLimit).contains(bytes.count) else { return false }
        func alphanumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        return alphanumeric(bytes[0])
            && bytes.dropFirst().allSatisfy { alphanumeric($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }
}
