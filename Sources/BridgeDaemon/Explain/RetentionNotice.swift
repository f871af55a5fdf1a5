import BridgeCore
import BridgeStore
import Foundation

/// The plain sentence `runs show` and `explain` give when retention removed what was asked for,
/// naming the key that governs it and its value, so a maintainer is not left wondering whether a
/// run never existed or the bridge lost it.
public enum RetentionNotice {
    /// For a run id with no row left: a sentence when some repository's pruned runs reach `runID`
    /// (GitHub's run ids grow across repositories, so an id at or below the highest one removed was
    /// most likely removed too); nil when none does, and the run was simply never recorded.
    public static func prunedRun(_ runID: Int, marks: [RetentionMark]) -> String? {
        guard let mark = marks.min(by: { ($0.throughRunID ?? 0) < ($1.throughRunID ?? 0) }) else { return nil }
        let repositories = marks.compactMap(\.repository)
        let scope =
            repositories.count == 1
            ? "runs of \(repositories[0]) up to \(mark.throughRunID ?? runID)"
            : "runs of \(repositories.count) repositories up to at least \(mark.throughRunID ?? runID)"
        return "run \(runID) is no longer recorded: its details were pruned by retention (\(mark.key) = "
            + "\(DurationText.text(mark.retention)): a finished run, its jobs and its PushWard requests are removed "
            + "\(DurationText.text(mark.retention)) after its last update; \(scope) were removed, the latest cutoff "
            + "being \(GitHubTimestamp.format(mark.before)))"
    }

    /// For a run still recorded whose deliveries retention removed (it was first seen before the
    /// latest delivery cutoff): a sentence saying so, or nil when its timeline is whole.
    public static func prunedDeliveries(_ run: StoredRun, remaining: Int, mark: RetentionMark?) -> String? {
        guard let mark, run.state.firstSeenAt < mark.before else { return nil }
        let rule =
            "by retention (\(mark.key) = \(DurationText.text(mark.retention)): a delivery's row is removed "
            + "\(DurationText.text(mark.retention)) after it was received)"
        if remaining == 0 {
            return "Its deliveries were pruned \(rule), so what GitHub sent for it can no longer be shown or replayed."
        }
        return "Its deliveries received before \(GitHubTimestamp.format(mark.before)) were pruned \(rule); "
            + "only the later ones are shown."
    }
}
