/// A finished run as history remembers it: the shape of its steps and how long each took.
///
/// Later runs of the same workflow are seeded from it (so `total_steps` is right from the first
/// frame although GitHub creates `needs:` jobs late) and weighted by it.
public struct RunSummary: Sendable, Equatable, Codable {
    public var key: RunKey
    public var workflow: String
    public var branch: String?
    public var conclusion: String
    public var finishedAt: UnixTime
    /// In display order.
    public var groups: [GroupSummary]

    public init(
        key: RunKey, workflow: String, branch: String?, conclusion: String, finishedAt: UnixTime,
        groups: [GroupSummary]
    ) {
        self.key = key
        self.workflow = workflow
        self.branch = branch
        self.conclusion = conclusion
        self.finishedAt = finishedAt
        self.groups = groups
    }
}

/// One step of a finished run.
public struct GroupSummary: Sendable, Equatable, Codable {
    public var name: String
    public var jobCount: Int
    /// Seconds the longest job of the group ran; nil when none ran (all skipped, or never timed).
    public var duration: Double?

    public init(name: String, jobCount: Int, duration: Double?) {
        self.name = name
        self.jobCount = jobCount
        self.duration = duration
    }
}
