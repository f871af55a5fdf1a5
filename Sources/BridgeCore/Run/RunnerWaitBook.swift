/// The runner-wait timers: for each run with a job still queued, when that job next
/// crosses a threshold worth saying — `activity.runner_wait` for the card, the shortest
/// `queued_after` of the alert rules covering the run for a `queued` alert — so the timer looks
/// here instead of at every run. `RunBook` holds it beside its completions by grace.
///
/// The crossings are noticed by time alone (no delivery comes while a job waits for a runner),
/// each once: the card's wait is recorded on the run (`RunState.runnerWait`) and drawn from that
/// record, and the alert's crossing is recorded too (`RunState.queuedAlertAt`), so neither is
/// due again for the same wait.
public struct RunnerWaitBook: Sendable {
    private var due: [RunKey: UnixTime] = [:]

    public init() {}

    /// Records when `key`'s run next crosses a threshold; nil when it will not.
    mutating func schedule(_ key: RunKey, at time: UnixTime?) {
        due[key] = time
    }

    /// The runs with a crossing due by `now`, the earliest first.
    func dueRuns(at now: UnixTime) -> [RunKey] {
        due.filter { $0.value <= now }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.map(\.key)
    }

    /// The earliest crossing after `now`.
    func next(after now: UnixTime) -> UnixTime? {
        var earliest: UnixTime?
        for time in due.values where time > now && earliest.map({ time < $0 }) ?? true { earliest = time }
        return earliest
    }

    // MARK: What a run's jobs say

    /// The job of a run that waits for a runner: the longest-queued one with a known creation
    /// time, while nothing else of the run goes on. A job without `created_at` (some 2021-era and
    /// self-hosted payloads) has no wait to measure. While a job of the run runs, the card shows
    /// that progress (a matrix wider than its pool queues its last shards for a while, which is
    /// not news), and while one waits for an approval, the approval is what the run waits for.
    public static func longestQueued(_ state: RunState) -> JobRecord? {
        guard state.completion == nil else { return nil }
        var longest: JobRecord?
        for job in state.jobs.values where !job.isCheckRun {
            if job.isRunning || job.isWaiting { return nil }
            guard job.status == .queued, let created = job.createdAt else { continue }
            if longest.map({ (created, job.id) < ($0.createdAt!, $0.id) }) ?? true { longest = job }
        }
        return longest
    }

    /// The wait the card shows: the recorded one while its job is still the one that waits, and no
    /// other job of the run ran since it was noticed. A function of the jobs alone, not of when
    /// the run last changed: recovery's lookups (`heardFromAPI`) touch a quiet run, which a job
    /// waiting for a runner is, every `stale_after`, and a wait noticed again each time would be
    /// an update each time. When another job ran meanwhile, the wait is noticed again (`crossing`)
    /// with the minutes of that moment, rather than the card going back to minutes long past.
    public static func shownWait(_ state: RunState) -> RunnerWait? {
        guard let wait = state.runnerWait, longestQueued(state)?.id == wait.jobID,
            !state.jobs.values.contains(where: { ($0.completedAt ?? $0.startedAt ?? -.infinity) > wait.noticedAt })
        else { return nil }
        return wait
    }

    /// When the run next crosses a threshold: the longest-queued job's creation plus `runnerWait`
    /// (unless the card already says a wait), or plus `alertAfter` (unless the alert's crossing
    /// was recorded). Nil when nothing is queued or the run is over.
    static func nextCrossing(_ state: RunState, runnerWait: UnixTime, alertAfter: UnixTime?) -> UnixTime? {
        guard let created = longestQueued(state)?.createdAt else { return nil }
        var times: [UnixTime] = []
        if shownWait(state) == nil { times.append(created + runnerWait) }
        if state.queuedAlertAt == nil, let alertAfter { times.append(created + alertAfter) }
        return times.min()
    }

    /// The wait to record at `now`: the longest-queued job, once it has been queued `runnerWait`;
    /// nil while the card already says a wait, or when no job waited that long.
    static func crossing(_ state: RunState, at now: UnixTime, runnerWait: UnixTime) -> RunnerWait? {
        guard shownWait(state) == nil, let job = longestQueued(state), let created = job.createdAt,
            created + runnerWait <= now
        else { return nil }
        return RunnerWait(jobID: job.id, job: job.name, since: created, labels: job.labels ?? [], noticedAt: now)
    }

    /// Whether the longest-queued job has been queued `alertAfter` by `now`, and the run's
    /// `queued` alert was not raised yet.
    static func alertDue(_ state: RunState, at now: UnixTime, alertAfter: UnixTime) -> Bool {
        guard state.queuedAlertAt == nil, let created = longestQueued(state)?.createdAt else { return false }
        return created + alertAfter <= now
    }
}
