/// The whole pure core as one value: runs, their cards and history, moved by deliveries and by
/// time. It never reads a clock and performs no I/O; the daemon persists what it holds and sends
/// the requests it plans, and `render` drives it with a simulated clock.
public struct BridgeEngine: Sendable {
    public var settings: ActivitySettings
    public var filter: DeliveryFilter
    public internal(set) var runs: [RunKey: RunState] = [:]
    public internal(set) var sessions: [String: ActivitySession] = [:]
    /// The finished runs of the workflows seen lately; the rest is read from the provider passed
    /// to `receive` when a run needs it.
    public internal(set) var history: HistoryCache
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
    /// Keeps the requests to PushWard under its per-minute limit (`pushward.requests_per_minute`);
    /// nil: unpaced (the core's own tests, `render`). Not stored: a restart starts a new window.
    public var pacer: RequestPacer?
    /// Where the month's updates stand (from `GET /auth/me`); with a limit and `fidelity: auto`,
    /// the budget planner picks each new run's level. Nil: not known, the configured level applies.
    public var budget: PushBudget?
    /// Runs that wanted a card, per hour of the last 14 days: the planner's forecast.
    public var arrivals = RunArrivals()
    /// The level the planner chose last, which it moves up from only with room to spare.
    public internal(set) var levelInForce: Fidelity?
    /// Which runs notify, for which reasons (the `alerts` section; off by default).
    public var alertSettings = AlertSettings()
    /// Buttons that act on GitHub from the phone (the `actions` section; off by default).
    public var actionSettings: ActionSettings?
    /// Whose phones a run's card and alerts go to (the `routing` section; off by default).
    public var routing = RoutingSettings()
    /// The configured home-screen widgets (`widgets`; none by default).
    public var widgetSettings: [WidgetSettings] = []
    /// Each configured widget's state, by slug.
    public var widgets: [String: WidgetSession] = [:]
    /// Where the month's widget updates stand, and a pause after PushWard said they are spent.
    public var widgetBudget = WidgetBudget()
    /// The configured API key's fingerprint (`useKey`), recorded with a refused target.
    public internal(set) var keyFingerprint: String?
    /// Runs that finished by the grace period since alerts were last planned (`planAlerts`):
    /// `advance` has no history to ask whether a success fixed something.
    var alertChecks: [RunKey: Set<AlertReason>] = [:]
    /// What the slot planner decided and works from (`BridgeEngine+Slots`).
    var slots = SlotBook()

    public init(
        settings: ActivitySettings = ActivitySettings(), filter: DeliveryFilter = DeliveryFilter(),
        historyCapacity: Int = HistoryCache.defaultCapacity
    ) {
        self.settings = settings
        self.filter = filter
        self.history = HistoryCache(capacity: historyCapacity)
    }

    /// Applies one decoded delivery received at `now`, with no history but what this engine
    /// recorded itself (tests and tools that feed a few runs).
    public mutating func receive(_ event: WebhookEvent, at now: UnixTime) -> DeliveryOutcome {
        receive(event, at: now, history: RunHistory())
    }

    /// Applies one decoded delivery received at `now`; what the engine does not hold (a workflow's
    /// finished runs, a run or card it let go of) is read from `provider`. When the provider
    /// throws, nothing of the delivery has been applied to the run it names.
    public mutating func receive<Provider: HistoryProvider>(
        _ event: WebhookEvent, at now: UnixTime, history provider: Provider
    ) throws(Provider.Failure) -> DeliveryOutcome {
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
            try update(key, repository: delivery.repository, at: now, provider: provider) { state in
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
            // `started` is what the 2021 beta of the event called `in_progress`.
            guard ["queued", "waiting", "in_progress", "started", "completed"].contains(delivery.action) else {
                return .ignored(reason: "workflow_job action \(delivery.action) is not used")
            }
            let job = delivery.job
            let key = RunKey(repository: delivery.repository.fullName, runID: job.runID, attempt: job.runAttempt)
            try recall(key, from: provider)
            if let reason = filter.rejection(
                repository: delivery.repository.fullName, workflow: job.workflowName ?? runs[key]?.workflowName,
                branch: job.headBranch, event: runs[key]?.run?.event)
            {
                return .ignored(reason: reason)
            }
            try update(key, repository: delivery.repository, at: now, provider: provider) { state in
                state.apply(delivery)
            }
            return .applied(key)
        }
    }

    /// Creates the run on first sight, applies `change`, and keeps everything that follows from
    /// the run's state (history seed, card, completion record) in step.
    private mutating func update<Provider: HistoryProvider>(
        _ key: RunKey, repository: Repository, at now: UnixTime, provider: Provider,
        change: (inout RunState) -> Bool
    ) throws(Provider.Failure) {
        try recall(key, from: provider)
        if runs[key] == nil {
            arrivals.record(at: now)
            changes.arrivalHours.insert(Int(now / 3_600))
        }
        var state: RunState
        if let held = runs[key] {
            state = held
        } else {
            state = try newRun(key, repository: repository, at: now, provider: provider)
        }
        let before = state
        if change(&state) { state.lastChangeAt = now }
        try resolveHistory(&state, provider: provider)
        if state != runs[key] { changes.runs.insert(key) }
        for (id, job) in state.jobs where runs[key]?.jobs[id] != job { changes.jobs[key, default: []].insert(id) }
        runs[key] = state
        completionDue[key] = state.completion == nil ? inferredCompletionDue(state) : nil
        let slug =
            slugs[key]
            ?? ActivityIdentity.forRun(
                repository: repository, workflow: state.workflowName, scope: settings.scope,
                person: route(for: state).person
            ).slug
        if slugs[key] == nil {
            slugs[key] = slug
            contendersBySlug[slug, default: []].insert(key)
        }
        if sessions[slug] == nil, let card = try provider.storedSession(slug: slug) {
            restore(session: card.session, floor: card.floor)
        }
        if state.completion != nil { recordHistory(for: key) }
        reassignActivities(slug)
        followWidgets(key)
        if alertSettings.isEnabled || actionSettings != nil {
            let reasons = Self.alertTransitions(from: before, to: state)
            if !reasons.isEmpty { try planAlerts(key, reasons: reasons, provider: provider) }
        }
    }

    /// Puts back a run the engine let go of, when storage has it: a late delivery then moves the
    /// run as it stood, not a blank one.
    private mutating func recall<Provider: HistoryProvider>(_ key: RunKey, from provider: Provider)
        throws(Provider.Failure)
    {
        guard runs[key] == nil, let stored = try provider.storedRun(key) else { return }
        restore(run: stored.state, slug: stored.slug, released: stored.released)
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
        slots.indexStale = true
    }

    /// Puts back a card read from storage.
    public mutating func restore(session: ActivitySession, floor: ProgressFloor?) {
        sessions[session.identity.slug] = session
        dirtySlugs.insert(session.identity.slug)
        progressFloors[session.identity.slug] = floor
        slots.indexStale = true
    }

    /// Hands over what changed since the last call, and starts counting afresh.
    public mutating func takeChanges() -> EngineChanges {
        defer { changes = EngineChanges() }
        return changes
    }

    /// How long a run done with its card stays in memory after it finished: late deliveries
    /// (a job's `completed` after the run's) usually come within seconds. Past it a delivery for
    /// the run reads it back from the provider, so this is a cache policy, not a correctness one.
    public static let finishedRunGrace: UnixTime = 60

    /// GitHub cancels a workflow run that reaches 35 days.
    public static let abandonedAfter: UnixTime = 35 * 86_400

    /// Lets go of what the work in flight no longer needs, so memory follows it rather than
    /// history: runs done with their card that finished `finishedRunGrace` before `now`, and ended
    /// cards no run contends for that sent nothing in the last hour (the hourly cap counts that
    /// hour), and runs silent past `abandonedAfter`, which are released first. Storage keeps all
    /// of it; `receive` reads it back when a delivery needs it. Nothing with changes not yet taken
    /// is let go of: those rows are not written yet.
    ///
    /// Each pass first picks what to let go of and only then removes it: removing from a dictionary
    /// while iterating it copies the whole dictionary (the iterator keeps the old storage alive),
    /// and that copy, a megabyte or more of run states each pass, left the heap a little larger
    /// every time it was freed (RSS climbed 2.5 MB a pass under a steady load).
    public mutating func forget(at now: UnixTime) {
        let idleCards = sessions.compactMap { slug, session -> String? in
            // An activity still to be deleted keeps its card (and its run) in memory until it is.
            guard session.phase == .ended, contendersBySlug[slug]?.isEmpty ?? true, !changes.slugs.contains(slug),
                session.updates(inHourBefore: now).isEmpty, Self.deletionDue(session, settings: settings) == nil
            else { return nil }
            return slug
        }
        for slug in idleCards {
            // An ended card has nothing to send: being due or dirty changes nothing for it.
            dirtySlugs.remove(slug)
            sessions[slug] = nil
            progressFloors[slug] = nil
            slugDue[slug] = nil
            contendersBySlug[slug] = nil
            slots.forget(slug)
        }
        // A run silent for longer than GitHub lets a run last lost its last deliveries and will
        // never change: done with its card (written as released, so a start skips it), then let go.
        let abandoned = runs.compactMap { key, state -> (RunKey, String)? in
            guard state.completion == nil, state.lastChangeAt < now - Self.abandonedAfter, !released.contains(key),
                let slug = slugs[key], sessions[slug]?.owner != key
            else { return nil }
            return (key, slug)
        }
        for (key, slug) in abandoned { release(key, slug: slug) }
        let finished = runs.compactMap { key, state -> (RunKey, String)? in
            let finishedAt = state.completion?.recognizedAt ?? (state.lastChangeAt + Self.abandonedAfter)
            guard released.contains(key), finishedAt < now - Self.finishedRunGrace, !changes.runs.contains(key),
                changes.history[key] == nil, let slug = slugs[key], sessions[slug]?.owner != key
            else { return nil }
            return (key, slug)
        }
        for (key, slug) in finished {
            runs[key] = nil
            completionDue[key] = nil
            slugs[key] = nil
            contendersBySlug[slug]?.remove(key)
            if contendersBySlug[slug]?.isEmpty == true { contendersBySlug[slug] = nil }
            released.remove(key)
        }
        arrivals.prune(at: now)
    }

    private func newRun<Provider: HistoryProvider>(
        _ key: RunKey, repository: Repository, at now: UnixTime, provider: Provider
    ) throws(Provider.Failure) -> RunState {
        var state = RunState(key: key, repository: repository, at: now)
        // A re-run carries the steps of the attempt before it; "re-run failed jobs" leaves the
        // successful ones as they were. Skipped ones are not complete: they were skipped because
        // something they need failed, and are re-run with it.
        // A first attempt (nearly every run) has none before it, and is not worth a pass over the runs.
        guard key.attempt > 1 else { return state }
        // The latest earlier attempt held is looked up among the runs rather than by counting down
        // from `key.attempt`: `run_attempt` is any 64-bit number a payload says, and counting down
        // from 2^63 hung the engine on a single delivery. Over the keys alone: iterating the
        // dictionary's elements copied every run's state (a retain per field), which at 1,000
        // deliveries a second and some 5,000 runs held took 7 % of the daemon's CPU.
        let earlierKey = runs.keys.lazy.filter { candidate in
            candidate.repository == key.repository && candidate.runID == key.runID && candidate.attempt >= 1
                && candidate.attempt < key.attempt
        }.max(by: { $0.attempt < $1.attempt })
        // Storage holds the attempts the engine let go of; one the engine still holds is newer.
        var earlier = earlierKey.flatMap { runs[$0] }
        if let stored = try provider.latestAttempt(repository: key.repository, runID: key.runID, below: key.attempt),
            runs[stored.key] == nil, stored.key.attempt > earlier?.key.attempt ?? 0
        {
            earlier = stored
        }
        if let earlier {
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
    private mutating func resolveHistory<Provider: HistoryProvider>(_ state: inout RunState, provider: Provider)
        throws(Provider.Failure)
    {
        guard !state.historyResolved, let workflow = state.workflowName else { return }
        let history = try workflowHistory(repository: state.key.repository, workflow: workflow, provider: provider)
        state.historyResolved = true
        // While the origin is unknown the job's branch still picks the likeliest shape.
        state.seed = history.seed(
            repository: state.key.repository, workflow: workflow,
            branch: state.origin == .unknown ? state.headBranch : state.historyBranch,
            excluding: state.key.runID)
        state.estimates = history.estimates(
            repository: state.key.repository, workflow: workflow, excluding: state.key.runID)
    }

    /// A workflow's finished runs: from the cache, else from the provider with the runs recorded
    /// since the last `takeChanges()` laid over them (storage has not seen those yet).
    private mutating func workflowHistory<Provider: HistoryProvider>(
        repository: String, workflow: String, provider: Provider
    ) throws(Provider.Failure) -> RunHistory {
        let entry = HistoryCache.Workflow(repository: repository, name: workflow)
        if let held = history.lookup(entry) { return held }
        var loaded = RunHistory(summaries: try provider.finishedRuns(repository: repository, workflow: workflow))
        for summary in changes.history.values where summary.key.repository == repository && summary.workflow == workflow
        {
            loaded.record(summary)
        }
        history.store(loaded, for: entry)
        return loaded
    }

    /// Records (or refreshes) a finished run in history: what later runs are seeded and weighted by.
    mutating func recordHistory(for key: RunKey) {
        guard let state = runs[key], let completion = state.completion, let workflow = state.workflowName else {
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
    /// Runs that finished (or finished again), as history now summarises them.
    public var history: [RunKey: RunSummary] = [:]
    /// The jobs (by id) whose records changed, per run: only those rows are written.
    public var jobs: [RunKey: Set<Int>] = [:]
    /// The dispatch gate changed.
    public var gate = false
    /// Hours (seconds since 1970 / 3600) whose count of new runs changed (`RunArrivals`).
    public var arrivalHours: Set<Int> = []
    /// Notifications planned, in the order planned; the store records each once per run and
    /// reason, so planning one again (a redelivery, a run finishing again) sends nothing twice.
    public var alerts: [PlannedAlert] = []
    /// Widgets whose state changed (a run followed, an answer).
    public var widgets: Set<String> = []

    public init() {}

    public var isEmpty: Bool {
        runs.isEmpty && slugs.isEmpty && history.isEmpty && !gate && arrivalHours.isEmpty && alerts.isEmpty
            && widgets.isEmpty
    }
}
