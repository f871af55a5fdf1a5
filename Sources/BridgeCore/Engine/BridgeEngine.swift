/// The whole pure core as one value: runs, their cards and history, moved by deliveries and by
/// time. It never reads a clock and performs no I/O; the daemon persists what it holds and sends
/// the requests it plans, and `render` drives it with a simulated clock.
public struct BridgeEngine: Sendable {
    public var settings: ActivitySettings
    public var filter: DeliveryFilter
    public internal(set) var runs: [RunKey: RunState] = [:]
    public internal(set) var sessions: [String: ActivitySession] = [:]
    public internal(set) var history: RunHistory
    /// The card each run draws on, fixed when the run is first seen.
    public internal(set) var slugs: [RunKey: String] = [:]
    /// Runs done with their card: ended on it, or finished while another run held it.
    public internal(set) var released: Set<RunKey> = []
    /// Per slug, the floor under `progress` for the current owner, so the bar never moves back
    /// within an attempt (new `needs:` jobs raise the job count mid-run).
    public internal(set) var progressFloors: [String: ProgressFloor] = [:]
    /// The runs that may still hold each card (not released): ownership is decided among these,
    /// not by scanning every run that ever drew on the slug.
    var contendersBySlug: [String: Set<RunKey>] = [:]
    /// Runs whose jobs all finished without a `completed` delivery yet, and when the grace period
    /// makes them finished: timers look here instead of at every run.
    var completionDue: [RunKey: UnixTime] = [:]
    /// Cards something happened to since they were last decided: a delivery for their run, an
    /// answer from PushWard, a new owner. The dispatcher decides these, not every card.
    var dirtySlugs: Set<String> = []
    /// When each card next needs deciding although nothing happens to it: a throttle window, a
    /// retry, the end frame, the end, a heartbeat. Recorded by `decide`.
    var slugDue: [String: UnixTime] = [:]
    /// What changed since the last `takeChanges()`: the rows the daemon must write.
    public var changes = EngineChanges()
    /// What holds back every request (quota, rate limit, refused key, circuit breaker).
    public var gate = DispatchGate()
    /// Where the month's updates stand (from `GET /auth/me`); with a limit and `fidelity: auto`,
    /// the budget planner picks each new run's level. Nil: not known, the configured level applies.
    public var budget: PushBudget?
    /// Runs that wanted a card, per hour of the last 14 days: the planner's forecast.
    public var arrivals = RunArrivals()
    /// The level the planner chose last, which it moves up from only with room to spare.
    public internal(set) var levelInForce: Fidelity?

    public init(
        settings: ActivitySettings = ActivitySettings(), filter: DeliveryFilter = DeliveryFilter(),
        history: RunHistory = RunHistory()
    ) {
        self.settings = settings
        self.filter = filter
        self.history = history
    }

    /// Applies one decoded delivery received at `now`.
    public mutating func receive(_ event: WebhookEvent, at now: UnixTime) -> DeliveryOutcome {
        switch event {
        case .unsupported(let name):
            return .ignored(reason: "unsupported event \(name)")
        case .ping(let ping):
            let wanted = ["workflow_run", "workflow_job"]
            let missing = wanted.filter { !ping.events.contains($0) && !ping.events.contains("*") }
            guard !missing.isEmpty else { return .ping(warning: nil) }
            return .ping(
                warning: "the hook does not send \(missing.joined(separator: " and ")); tick Workflow runs and "
                    + "Workflow jobs in its settings")
        case .workflowRun(let delivery):
            guard ["requested", "in_progress", "completed"].contains(delivery.action) else {
                return .ignored(reason: "workflow_run action \(delivery.action) is not used")
            }
            let run = delivery.run
            if let reason = filter.rejection(
                repository: delivery.repository.fullName, workflow: run.name.flatMap { $0.isEmpty ? nil : $0 },
                branch: run.headBranch, event: run.event)
            {
                return .ignored(reason: reason)
            }
            let key = RunKey(repository: delivery.repository.fullName, runID: run.id, attempt: run.runAttempt)
            update(key, repository: delivery.repository, at: now) { state in
                var changed = state.apply(run)
                if run.status == .completed, state.completion?.source != .runEvent {
                    let recognizedAt = state.completion?.recognizedAt ?? now
                    state.completion = RunCompletion(
                        conclusion: state.run?.conclusion ?? run.conclusion ?? "success", recognizedAt: recognizedAt,
                        source: .runEvent)
                    changed = true
                } else if let completion = state.completion, completion.source == .runEvent,
                    let conclusion = state.run?.conclusion, conclusion != completion.conclusion
                {
                    state.completion?.conclusion = conclusion
                    changed = true
                }
                return changed
            }
            return .applied(key)
        case .workflowJob(let delivery):
            guard ["queued", "waiting", "in_progress", "completed"].contains(delivery.action) else {
                return .ignored(reason: "workflow_job action \(delivery.action) is not used")
            }
            let job = delivery.job
            let key = RunKey(repository: delivery.repository.fullName, runID: job.runID, attempt: job.runAttempt)
            if let reason = filter.rejection(
                repository: delivery.repository.fullName, workflow: job.workflowName ?? runs[key]?.workflowName,
                branch: job.headBranch, event: runs[key]?.run?.event)
            {
                return .ignored(reason: reason)
            }
            update(key, repository: delivery.repository, at: now) { state in state.apply(delivery) }
            return .applied(key)
        }
    }

    /// Creates the run on first sight, applies `change`, and keeps everything that follows from
    /// the run's state (history seed, card, completion record) in step.
    private mutating func update(
        _ key: RunKey, repository: Repository, at now: UnixTime, change: (inout RunState) -> Bool
    ) {
        if runs[key] == nil { arrivals.record(at: now) }
        var state = runs[key] ?? newRun(key, repository: repository, at: now)
        if change(&state) { state.lastChangeAt = now }
        resolveHistory(&state)
        if state != runs[key] { changes.runs.insert(key) }
        for (id, job) in state.jobs where runs[key]?.jobs[id] != job { changes.jobs[key, default: []].insert(id) }
        runs[key] = state
        completionDue[key] = state.completion == nil ? inferredCompletionDue(state) : nil
        let slug =
            slugs[key]
            ?? ActivityIdentity.forRun(repository: repository, workflow: state.workflowName, scope: settings.scope).slug
        if slugs[key] == nil {
            slugs[key] = slug
            contendersBySlug[slug, default: []].insert(key)
        }
        if state.completion != nil { recordHistory(for: key) }
        reassignCards(slug)
    }

    /// Puts back a run read from storage.
    public mutating func restore(run state: RunState, slug: String, released isReleased: Bool) {
        runs[state.key] = state
        slugs[state.key] = slug
        if isReleased {
            released.insert(state.key)
        } else {
            contendersBySlug[slug, default: []].insert(state.key)
        }
        completionDue[state.key] = state.completion == nil ? inferredCompletionDue(state) : nil
    }

    /// Puts back a card read from storage.
    public mutating func restore(session: ActivitySession, floor: ProgressFloor?) {
        sessions[session.identity.slug] = session
        dirtySlugs.insert(session.identity.slug)
        progressFloors[session.identity.slug] = floor
    }

    /// Hands over what changed since the last call, and starts counting afresh.
    public mutating func takeChanges() -> EngineChanges {
        defer { changes = EngineChanges() }
        return changes
    }

    /// Forgets runs that are done with their card and finished before `cutoff`: their history
    /// stays, and storage keeps them for maintainers; the engine needs them no more.
    public mutating func forget(finishedBefore cutoff: UnixTime) {
        for (key, state) in runs {
            guard released.contains(key), let completion = state.completion, completion.recognizedAt < cutoff,
                let slug = slugs[key], sessions[slug]?.owner != key
            else { continue }
            runs[key] = nil
            completionDue[key] = nil
            slugs[key] = nil
            contendersBySlug[slug]?.remove(key)
            released.remove(key)
        }
    }

    private func newRun(_ key: RunKey, repository: Repository, at now: UnixTime) -> RunState {
        var state = RunState(key: key, repository: repository, at: now)
        // A re-run carries the steps of the attempt before it; "re-run failed jobs" leaves the
        // successful ones as they were. Skipped ones are not complete: they were skipped because
        // something they need failed, and are re-run with it.
        // The latest earlier attempt held is looked up among the runs rather than by counting down
        // from `key.attempt`: `run_attempt` is any 64-bit number a payload says, and counting down
        // from 2^63 hung the engine on a single delivery.
        let earlierAttempts = runs.lazy.filter { candidate, _ in
            candidate.repository == key.repository && candidate.runID == key.runID && candidate.attempt >= 1
                && candidate.attempt < key.attempt
        }
        if let earlier = earlierAttempts.max(by: { $0.key.attempt < $1.key.attempt })?.value {
            state.inherited = StepPlanner.plan(for: earlier).groups.map { group in
                InheritedGroup(
                    name: group.name, orderKey: group.orderKey, jobCount: group.totalJobCount,
                    succeeded: group.isFinished
                        && (group.jobs.isEmpty
                            ? group.completedEarlier
                            : group.jobs.allSatisfy { ["success", "neutral"].contains($0.conclusion ?? "") })
                )
            }
        }
        return state
    }

    /// Seeds the run's shape and estimates from history once its workflow is known.
    private func resolveHistory(_ state: inout RunState) {
        guard !state.historyResolved, let workflow = state.workflowName else { return }
        state.historyResolved = true
        state.seed = history.seed(
            repository: state.key.repository, workflow: workflow, branch: state.headBranch,
            excluding: state.key.runID)
        state.estimates = history.estimates(
            repository: state.key.repository, workflow: workflow, excluding: state.key.runID)
    }

    /// Records (or refreshes) a finished run in history: what later runs are seeded and weighted by.
    mutating func recordHistory(for key: RunKey) {
        guard let state = runs[key], let completion = state.completion, let workflow = state.workflowName else {
            return
        }
        let groups = StepPlanner.plan(for: state).groups.filter { $0.origin != .seeded }
        changes.history.insert(key)
        history.record(
            RunSummary(
                key: key, workflow: workflow, branch: state.headBranch, conclusion: completion.conclusion,
                finishedAt: state.run?.updatedAt ?? completion.recognizedAt,
                groups: groups.map { group in
                    GroupSummary(
                        name: group.name, jobCount: group.totalJobCount,
                        duration: group.jobs.compactMap(\.runDuration).max())
                }))
    }
}

/// The lowest `progress` the card may show: per step with weights (each step fills from 0), for
/// the whole run without.
public struct ProgressFloor: Sendable, Equatable, Codable {
    public var run: RunKey
    public var step: Int
    public var progress: Double
}

/// The runs, cards and history entries an engine step touched: the rows the daemon writes.
public struct EngineChanges: Sendable, Equatable {
    public var runs: Set<RunKey> = []
    public var slugs: Set<String> = []
    public var history: Set<RunKey> = []
    /// The jobs (by id) whose records changed, per run: only those rows are written.
    public var jobs: [RunKey: Set<Int>] = [:]
    /// The dispatch gate changed.
    public var gate = false

    public init() {}

    public var isEmpty: Bool { runs.isEmpty && slugs.isEmpty && history.isEmpty && !gate }
}
