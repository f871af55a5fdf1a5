/// A job GitHub left queued past `activity.runner_wait`, as the card said it at the crossing.
///
/// A job that waits for a runner nobody serves (a self-hosted label, an exhausted pool) reads as a
/// calm `Queued` for up to 24 hours, until GitHub cancels it. The engine's timer notices the
/// crossing once and records it here; the card's text is made from this record, so it changes
/// once, at the crossing, and not every minute after: the minutes it shows are those of `noticedAt`.
/// Kept after the job started, so `runs show` can say what the run waited for.
public struct RunnerWait: Sendable, Equatable, Codable {
    public var jobID: Int
    /// The job's name as GitHub sent it (made plain when shown).
    public var job: String
    /// The job's `created_at`: the wait counts from here.
    public var since: UnixTime
    /// `workflow_job.labels`: which runners could take the job.
    public var labels: [String]
    /// When the engine noticed the crossing: the card's minutes are as of then.
    public var noticedAt: UnixTime

    public init(jobID: Int, job: String, since: UnixTime, labels: [String], noticedAt: UnixTime) {
        self.jobID = jobID
        self.job = job
        self.since = since
        self.labels = labels
        self.noticedAt = noticedAt
    }

    /// Whole minutes waited as of `noticedAt`.
    public var minutes: Int { Int(max(0, noticedAt - since) / 60) }

    /// `Waiting for a runner · self-hosted, arm64 · 12 min`: each label made plain (a label comes
    /// from whoever writes the workflow file), the whole fitted to `limit` as every card text is.
    public func cardText(limit: Int) -> String {
        var parts = ["Waiting for a runner"]
        let labels = labels.map(CardText.plain).filter { !$0.isEmpty }
        if !labels.isEmpty { parts.append(labels.joined(separator: ", ")) }
        parts.append(Self.duration(minutes: minutes))
        return CardText.fitted(parts.joined(separator: " · "), to: limit)
    }

    /// Whether the job still waits in `state`: queued, in a run not over. Looser than what the
    /// card shows (`RunnerWaitBook.shownWait`), which also hides a wait while another job runs:
    /// `runs show` and the status page say the job waits all the same.
    public func isCurrent(in state: RunState) -> Bool {
        state.completion == nil && state.jobs[jobID]?.status == .queued
    }

    /// What `runs show` and the status page say of it, names as sent (each caller escapes them
    /// for its output): `build waits for a runner since <time> (self-hosted, arm64)`, or `waited`
    /// once the job left the queue.
    public func summary(in state: RunState, formatTime: (UnixTime) -> String) -> String {
        var text = job + (isCurrent(in: state) ? " waits" : " waited") + " for a runner since " + formatTime(since)
        if !labels.isEmpty { text += " (" + labels.joined(separator: ", ") + ")" }
        return text + "; the card said so at " + formatTime(noticedAt)
    }

    /// `12 min`, `1 h 30 min`: a wait of hours said in hours.
    public static func duration(minutes: Int) -> String {
        guard minutes >= 60 else { return "\(minutes) min" }
        let rest = minutes % 60
        return "\(minutes / 60) h" + (rest == 0 ? "" : " \(rest) min")
    }
}
