/// The finished runs the bridge remembers, newest last, for seeding and weighting later runs.
public struct RunHistory: Sendable, Equatable {
    /// How many finished runs per repository and workflow are kept; older ones add nothing that
    /// the median of the recent ones does not already say.
    public static let runsKeptPerWorkflow = 20
    /// How many recent runs the duration estimate of a step is the median of.
    public static let estimateWindow = 5

    public private(set) var summaries: [RunSummary] = []

    public init(summaries: [RunSummary] = []) {
        for summary in summaries { record(summary) }
    }

    /// Adds or replaces (same run attempt) a finished run, keeping the newest per workflow.
    public mutating func record(_ summary: RunSummary) {
        summaries.removeAll { $0.key == summary.key }
        // Kept sorted by (finishedAt, key): inserted in place, found from the end, where a run
        // that just finished belongs. (Sorting the whole history on every completion showed up
        // under load: runs finish hundreds of times a second there.)
        let position =
            summaries.lastIndex { ($0.finishedAt, $0.key) < (summary.finishedAt, summary.key) }.map { $0 + 1 } ?? 0
        summaries.insert(summary, at: position)
        let sameWorkflow = summaries.filter {
            $0.key.repository == summary.key.repository && $0.workflow == summary.workflow
        }
        if sameWorkflow.count > Self.runsKeptPerWorkflow {
            let dropped = Set(sameWorkflow.prefix(sameWorkflow.count - Self.runsKeptPerWorkflow).map(\.key))
            summaries.removeAll { dropped.contains($0.key) }
        }
    }

    /// The run whose shape a new run of `workflow` on `branch` starts from: the last finished run
    /// on the same branch (a successful one preferred), else the same workflow on any branch.
    /// Nil when the workflow never finished here.
    public func seed(repository: String, workflow: String, branch: String?, excluding runID: Int) -> RunSummary? {
        let candidates = summaries.filter {
            $0.key.repository == repository && $0.workflow == workflow && $0.key.runID != runID
        }
        let sameBranch = candidates.filter { $0.branch == branch }
        return sameBranch.last { $0.conclusion == "success" } ?? sameBranch.last
            ?? candidates.last { $0.conclusion == "success" } ?? candidates.last
    }

    /// Each step's expected duration: the median over the last few runs of the workflow that ran
    /// it, so one slow or cancelled run does not resize the card. Steps never timed are absent.
    public func estimates(repository: String, workflow: String, excluding runID: Int) -> [String: Double] {
        var samples: [String: [Double]] = [:]
        for summary in summaries.reversed()
        where summary.key.repository == repository && summary.workflow == workflow && summary.key.runID != runID {
            for group in summary.groups {
                guard let duration = group.duration, samples[group.name, default: []].count < Self.estimateWindow
                else { continue }
                samples[group.name, default: []].append(duration)
            }
        }
        return samples.mapValues(Self.median)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

/// `render` and the tests: the finished runs played so far are the whole history, and nothing is
/// ever let go of, so there are no stored runs or cards to look up.
extension RunHistory: HistoryProvider {
    public typealias Failure = Never

    public func finishedRuns(repository: String, workflow: String) -> [RunSummary] {
        summaries.filter { $0.key.repository == repository && $0.workflow == workflow }
    }

    public func storedRun(_ key: RunKey) -> StoredRunState? { nil }

    public func latestAttempt(repository: String, runID: Int, below attempt: Int) -> RunState? { nil }

    public func storedSession(slug: String) -> StoredSessionState? { nil }

    public func lastDecisiveRun(
        repository: String, workflow: String, branch: String, before: UnixTime, excluding key: RunKey
    ) -> (finishedAt: UnixTime, conclusion: String)? {
        summaries.last {
            $0.key != key && $0.key.repository == repository && $0.workflow == workflow && $0.branch == branch
                && $0.finishedAt <= before && AlertReason.isDecisive($0.conclusion)
        }.map { ($0.finishedAt, $0.conclusion) }
    }
}
