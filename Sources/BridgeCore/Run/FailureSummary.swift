/// What a failed run's card and alert say of the failure at a glance: the failing job by its full
/// name (a matrix shard's included), its failed step, how many of its group's jobs failed, and the
/// failing job's page, where the error is (not the run's).
///
/// `Failed: test (shard-3) · Run · 2 of 4 failed`. Every part comes from payloads whose names a
/// pull request's author may choose: it is made plain and clamped as all card text (`CardText`).
public struct FailureSummary: Sendable, Equatable {
    /// The first failed job of the first failed group, by job id (creation order).
    public var job: String
    /// The job's first failed step (`steps[]`), when the payload named one.
    public var step: String?
    public var failedInGroup: Int
    public var jobsInGroup: Int
    /// The failing job's page (`…/actions/runs/<run>/job/<id>`), when the payload gave one.
    public var jobURL: String?
    /// The failing job's id, which is also its check run's: where GitHub keeps its annotations.
    public var jobID: Int

    /// The summary of `plan`'s first failed group; nil when no job failed.
    public static func of(_ plan: StepPlan) -> FailureSummary? {
        guard let group = plan.firstFailedGroup else { return nil }
        let failed = group.jobs.filter(\.failed)
        guard let first = failed.min(by: { $0.id < $1.id }) else { return nil }
        return FailureSummary(
            job: first.name, step: first.failedStep, failedInGroup: failed.count, jobsInGroup: group.jobs.count,
            jobURL: first.htmlURL, jobID: first.id)
    }

    /// `test (shard-3) · Run · 2 of 4 failed`: what follows "Failed: " on the end frame.
    public var text: String {
        var parts = [CardText.plain(job)]
        if let step, !step.isEmpty { parts.append(CardText.plain(step)) }
        if jobsInGroup > 1 { parts.append("\(failedInGroup) of \(jobsInGroup) failed") }
        return parts.joined(separator: " · ")
    }
}
