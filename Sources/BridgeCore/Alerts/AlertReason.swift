/// Why a run is worth a notification, beyond its card: it failed, it fixed what a failure broke,
/// or it waits for a person or for a runner.
public enum AlertReason: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// The run failed, timed out or could not start. Cancelled and superseded runs never alert:
    /// somebody stopped them on purpose.
    case failure
    /// The first success of a workflow on a branch whose previous decisive run failed.
    case fixed
    /// A job waits for an environment's approval (a deployment review).
    case waiting
    /// A job stayed queued for a runner `queued_after` (an alert rule's): a label nobody serves
    /// or an exhausted pool, said before GitHub cancels the job at 24 hours.
    case queued
    /// GitHub refused an action asked from a phone (`actions`): the card says it, and so does a
    /// notification. Not a reason `alerts.rules` name: it follows the `actions` section.
    case actionFailed = "action"

    /// The reasons `alerts.rules[].when` may name.
    public static let configurable: [AlertReason] = [.failure, .fixed, .waiting, .queued]

    public static func < (lhs: AlertReason, rhs: AlertReason) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// Conclusions that count as failed: what turns a card red.
    public static let failedConclusions: Set<String> = ["failure", "timed_out", "startup_failure"]

    /// Conclusions that say whether a branch is broken. Cancelled, skipped, neutral or stale runs
    /// say nothing either way, so "fixed" looks past them.
    public static func isDecisive(_ conclusion: String) -> Bool {
        conclusion == "success" || failedConclusions.contains(conclusion)
    }
}
