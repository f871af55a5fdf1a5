/// The engine's runs: each run's state, the card it draws on, whether it is done with that card,
/// which runs still contend for each card, when a run whose jobs all finished counts as finished
/// without its `completed` delivery, and the cache of finished runs per workflow that seeds new
/// ones. Other features read runs here and change them only through its methods, each of which
/// says what it changed in `changes` (`EngineChanges.runs`).
public struct RunBook: Sendable {
    public private(set) var states: [RunKey: RunState] = [:]
    /// The card each run draws on, fixed when the run is first seen.
    public private(set) var slugs: [RunKey: String] = [:]
    /// Runs done with their card: ended on it, or finished while another run held it.
    public private(set) var released: Set<RunKey> = []
    /// The runs that may still hold each card (not released): ownership is decided among these,
    /// not by scanning every run that ever drew on the slug.
    public private(set) var contendersBySlug: [String: Set<RunKey>] = [:]
    /// Runs whose jobs all finished without a `completed` delivery yet, and when the grace period
    /// makes them finished: timers look here instead of at every run.
    private var completionDue: [RunKey: UnixTime] = [:]
    /// When each run's longest-queued job next crosses `runner_wait` or an alert rule's
    /// `queued_after`: kept here beside the completions by grace, the other timer of a run's own;
    /// the engine works the time out (`scheduleWait`), since it knows the alert rules.
    public private(set) var waits = RunnerWaitBook()
    /// The finished runs of the workflows seen lately; the rest is read from the provider passed
    /// to `receive` when a run needs it.
    public private(set) var history: HistoryCache
    /// How long a run with every job finished waits for its `completed` delivery.
    private let completionGrace: UnixTime

    public init(completionGrace: UnixTime, historyCapacity: Int = HistoryCache.defaultCapacity) {
        self.completionGrace = completionGrace
        self.history = HistoryCache(capacity: historyCapacity)
    }

    public subscript(key: RunKey) -> RunState? { states[key] }

    // MARK: Runs coming and going

    /// Puts back a run read from storage.
    public mutating func restore(_ state: RunState, slug: String, released isReleased: Bool) {
        states[state.key] = state
        slugs[state.key] = slug
        if isReleased {
            released.insert(state.key)
        } else {
            contendersBySlug[slug, default: []].insert(state.key)
        }
        completionDue[state.key] = state.completion == nil ? inferredCompletionDue(state) : nil
    }

    /// Records `state` as the run's, with the rows that changed against what was held.
    public mutating func store(_ state: RunState, changes: inout EngineChanges) {
        let key = state.key
        if state != states[key] { changes.runs.insert(key) }
        for (id, job) in state.jobs where states[key]?.jobs[id] != job { changes.jobs[key, default: []].insert(id) }
        states[key] = state
        completionDue[key] = state.completion == nil ? inferredCompletionDue(state) : nil
    }

    /// Fixes the card `key` draws on, the first time only; returns the card it draws on.
    public mutating func draw(_ key: RunKey, on slug: String) -> String {
        if let held = slugs[key] { return held }
        slugs[key] = slug
        contendersBySlug[slug, default: []].insert(key)
        return slug
    }

    /// A run is done with its card: it never takes it again.
    public mutating func release(_ key: RunKey, slug: String, changes: inout EngineChanges) {
        released.insert(key)
        contendersBySlug[slug]?.remove(key)
        changes.runs.insert(key)
    }

    /// A run let go of while GitHub held it for approval was approved: it may take its card again.
    public mutating func contendAgain(_ key: RunKey, changes: inout EngineChanges) {
        guard let slug = slugs[key], released.remove(key) != nil else { return }
        contendersBySlug[slug, default: []].insert(key)
        changes.runs.insert(key)
    }

    /// The runs that may still take the card on `slug`.
    public func contenders(of slug: String) -> Set<RunKey> { contendersBySlug[slug] ?? [] }

    /// The card on `slug` was let go of: no run contends for it any more.
    public mutating func forgetCard(_ slug: String) {
        contendersBySlug[slug] = nil
    }

    /// Runs not finished, silent since `before`, not done with their card: GitHub cancels a run
    /// that lasts that long, so they are released. `holder` says who holds a card.
    public func abandoned(before: UnixTime, holder: (String) -> RunKey?) -> [(RunKey, String)] {
        states.compactMap { key, state -> (RunKey, String)? in
            guard state.completion == nil, state.lastChangeAt < before, !released.contains(key),
                let slug = slugs[key], holder(slug) != key
            else { return nil }
            return (key, slug)
        }
    }

    /// Runs done with their card that finished before `before` (an abandoned run counts as
    /// finished `abandonedAfter` after it was last heard of) and have no change not yet written.
    public func finished(
        before: UnixTime, abandonedAfter: UnixTime, pending: EngineChanges, holder: (String) -> RunKey?
    )
        -> [(RunKey, String)]
    {
        states.compactMap { key, state -> (RunKey, String)? in
            let finishedAt = state.completion?.recognizedAt ?? (state.lastChangeAt + abandonedAfter)
            guard released.contains(key), finishedAt < before, !pending.runs.contains(key),
                pending.history[key] == nil, let slug = slugs[key], holder(slug) != key
            else { return nil }
            return (key, slug)
        }
    }

    /// Lets go of a run (storage keeps it).
    public mutating func letGo(_ key: RunKey, slug: String) {
        states[key] = nil
        completionDue[key] = nil
        waits.schedule(key, at: nil)
        slugs[key] = nil
        contendersBySlug[slug]?.remove(key)
        if contendersBySlug[slug]?.isEmpty == true { contendersBySlug[slug] = nil }
        released.remove(key)
    }

    // MARK: What other features record on a run

    /// The budget planner's (or routing's) word on the run's card.
    public mutating func record(_ decision: CardDecision, for key: RunKey, changes: inout EngineChanges) {
        guard states[key] != nil else { return }
        states[key]?.cardDecision = decision
        changes.runs.insert(key)
    }

    /// Where the run stands among its person's slots, when that changed.
    public mutating func place(_ key: RunKey, _ placement: CardPlacement, changes: inout EngineChanges) {
        guard let state = states[key], state.placement != placement else { return }
        states[key]?.placement = placement
        changes.runs.insert(key)
    }

    /// What became of a pressed button, shown on the card until a delivery changes the run.
    public mutating func record(_ note: ActionNote, for key: RunKey, changes: inout EngineChanges) {
        guard states[key] != nil else { return }
        states[key]?.actionNote = note
        changes.runs.insert(key)
    }

    /// When `key`'s run next crosses a queued-job threshold; nil: it will not.
    public mutating func scheduleWait(_ key: RunKey, at time: UnixTime?) {
        waits.schedule(key, at: time)
    }

    /// The engine's timer noticed a job queued past `activity.runner_wait`: the card says so.
    public mutating func record(_ wait: RunnerWait, for key: RunKey, changes: inout EngineChanges) {
        guard states[key] != nil else { return }
        states[key]?.runnerWait = wait
        changes.runs.insert(key)
    }

    /// The engine's timer noticed the run's `queued` alert crossing: it is not looked for again.
    public mutating func recordQueuedAlert(for key: RunKey, at now: UnixTime, changes: inout EngineChanges) {
        guard states[key] != nil else { return }
        states[key]?.queuedAlertAt = now
        changes.runs.insert(key)
    }

    /// PushWard counted an update for the run's card.
    public mutating func countUpdate(for key: RunKey, changes: inout EngineChanges) {
        guard let spent = states[key].map({ $0.updatesSpent ?? 0 }) else { return }
        states[key]?.updatesSpent = spent + 1
        changes.runs.insert(key)
    }

    /// GitHub's API said the run goes on (nothing new in it): as a delivery would, this starts its
    /// quiet period and its completion grace again.
    public mutating func heardFromAPI(_ key: RunKey, at now: UnixTime, changes: inout EngineChanges) {
        guard var state = states[key], state.completion == nil, state.lastChangeAt < now else { return }
        state.lastChangeAt = now
        states[key] = state
        completionDue[key] = inferredCompletionDue(state)
        changes.runs.insert(key)
    }

    // MARK: Completion by grace

    /// The runs whose grace period ended by `now`, the earliest first.
    public func dueCompletions(at now: UnixTime) -> [(RunKey, UnixTime)] {
        completionDue.filter { $0.value <= now }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }
            .map { ($0.key, $0.value) }
    }

    /// Takes the run as finished at `due` (its `completed` delivery was lost), with the conclusion
    /// GitHub would have sent. Returns the state before, nil when it finished meanwhile.
    public mutating func completeByGrace(_ key: RunKey, at due: UnixTime, changes: inout EngineChanges) -> RunState? {
        completionDue[key] = nil
        guard let state = states[key], state.completion == nil else { return nil }
        states[key]?.completion = RunCompletion(
            conclusion: Self.inferredConclusion(StepPlanner.plan(for: state)), recognizedAt: due, source: .inferred)
        changes.runs.insert(key)
        return state
    }

    /// The earliest completion by grace after `now`.
    public func nextCompletion(after now: UnixTime) -> UnixTime? {
        var earliest: UnixTime?
        for time in completionDue.values where time > now && earliest.map({ time < $0 }) ?? true { earliest = time }
        return earliest
    }

    /// When a run with every job finished counts as finished without its `completed` delivery.
    func inferredCompletionDue(_ state: RunState) -> UnixTime? {
        let jobs = state.workflowJobs
        guard !jobs.isEmpty, jobs.allSatisfy(\.isFinished) else { return nil }
        return state.lastChangeAt + completionGrace
    }

    /// The conclusion GitHub would have sent: failure if a job failed, cancelled if one was
    /// cancelled, else success.
    static func inferredConclusion(_ plan: StepPlan) -> String {
        let conclusions = plan.groups.flatMap(\.jobs).compactMap(\.conclusion)
        if conclusions.contains(where: { ["failure", "timed_out", "startup_failure"].contains($0) }) {
            return "failure"
        }
        if conclusions.contains("cancelled") { return "cancelled" }
        return "success"
    }

    // MARK: History

    /// A workflow's finished runs, when the cache holds them.
    public mutating func cachedHistory(_ workflow: HistoryCache.Workflow) -> RunHistory? {
        history.lookup(workflow)
    }

    /// Caches a workflow's finished runs read from storage.
    public mutating func cache(_ loaded: RunHistory, for workflow: HistoryCache.Workflow) {
        history.store(loaded, for: workflow)
    }

    /// Records (or refreshes) a finished run in history: what later runs are seeded and weighted by.
    public mutating func recordHistory(for key: RunKey, changes: inout EngineChanges) {
        guard let state = states[key], let completion = state.completion, let workflow = state.workflowName else {
            return
        }
        let groups = StepPlanner.plan(for: state).groups.filter { $0.origin != .seeded }
        // A run that finished before any job showed has no shape to lend; storage could not keep
        // it either (history is stored a row per step).
        guard !groups.isEmpty else { return }
        let summary = RunSummary(
            key: key, workflow: workflow, branch: state.historyBranch, conclusion: completion.conclusion,
            finishedAt: state.run?.updatedAt ?? completion.recognizedAt,
            groups: groups.map { group in
                GroupSummary(
                    name: group.name, jobCount: group.totalJobCount,
                    duration: group.jobs.compactMap(\.runDuration).max())
            })
        changes.history[key] = summary
        history.recordIfHeld(summary)
    }

    // MARK: Questions about the runs held

    /// The latest attempt before `key`'s of the same run, among those held. Looked up among the
    /// keys rather than by counting down from `key.attempt`: `run_attempt` is any 64-bit number a
    /// payload says, and counting down from 2^63 hung the engine on a single delivery. Over the
    /// keys alone: iterating the dictionary's elements copied every run's state (a retain per
    /// field), which at 1,000 deliveries a second and some 5,000 runs held took 7 % of the
    /// daemon's CPU.
    public func latestAttempt(before key: RunKey) -> RunState? {
        let earlierKey = states.keys.lazy.filter { candidate in
            candidate.repository == key.repository && candidate.runID == key.runID && candidate.attempt >= 1
                && candidate.attempt < key.attempt
        }.max(by: { $0.attempt < $1.attempt })
        return earlierKey.flatMap { states[$0] }
    }

    /// Whether a newer attempt of `key`'s run is known: a re-run button of an older one is dead.
    public func hasNewerAttempt(than key: RunKey) -> Bool {
        states.keys.contains { $0.repository == key.repository && $0.runID == key.runID && $0.attempt > key.attempt }
    }

    /// The number of a newer run of the same workflow and branch, for a cancelled run.
    public func supersedingRunNumber(of state: RunState) -> Int? {
        guard state.completion?.conclusion == "cancelled", let workflow = state.workflowName else { return nil }
        let newer = states.values.filter {
            $0.key.repository == state.key.repository && $0.key.runID != state.key.runID
                && $0.workflowName == workflow && $0.headBranch == state.headBranch && $0.origin == state.origin
                && $0.attemptStartedAt > state.attemptStartedAt
        }
        guard let newest = newer.max(by: { ($0.attemptStartedAt, $0.key.runID) < ($1.attemptStartedAt, $1.key.runID) })
        else { return nil }
        return newest.run?.runNumber ?? newest.key.runID
    }

    /// Runs not finished that heard nothing since `before`, the quietest first, at most `limit`:
    /// what recovery asks GitHub's API about (`github.api.stale_after`).
    public func quietRuns(since before: UnixTime, limit: Int) -> [RunKey] {
        states.values.filter { $0.completion == nil && $0.lastChangeAt < before }
            .sorted { ($0.lastChangeAt, $0.key) < ($1.lastChangeAt, $1.key) }.prefix(limit).map(\.key)
    }
}
