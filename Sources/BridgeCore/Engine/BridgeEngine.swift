/// The whole pure core as one value: runs, their cards and history, moved by deliveries and by
/// time. It never reads a clock and performs no I/O; the daemon persists what it holds and sends
/// the requests it plans, and `render` drives it with a simulated clock.
///
/// It is composed of features, each a value with its own state that only its own methods change:
/// the configuration, the runs (`RunBook`), the cards with the push economy (`CardBook`), the
/// slot plan (`SlotBook`), the dispatch gate and pacer (`DispatchControl`), the widgets
/// (`WidgetBook`), the alerts waiting to be planned (`AlertBook`) and the pending `changes`. The
/// engine is the one entry point: it hands each feature what it reads of the others
/// (docs/ARCHITECTURE.md, "The engine").
public struct BridgeEngine: Sendable {
    /// The rules it runs with, fixed when it is made (but for the filters, `updateFilter`).
    public private(set) var configuration: EngineConfiguration
    var runBook: RunBook
    var cardBook = CardBook()
    /// What the slot planner decided and works from (`BridgeEngine+Slots`).
    var slots = SlotBook()
    public internal(set) var dispatch = DispatchControl()
    var widgetBook = WidgetBook()
    var alertBook = AlertBook()
    /// What changed since the last `takeChanges()`: the rows the daemon must write. Settable, so a
    /// daemon whose write failed puts them back to be written with the next.
    public var changes = EngineChanges()

    public init(configuration: EngineConfiguration, historyCapacity: Int = HistoryCache.defaultCapacity) {
        self.configuration = configuration
        self.runBook = RunBook(
            completionGrace: configuration.settings.completionGrace, historyCapacity: historyCapacity)
    }

    public init(
        settings: ActivitySettings = ActivitySettings(), filter: DeliveryFilter = DeliveryFilter(),
        historyCapacity: Int = HistoryCache.defaultCapacity
    ) {
        self.init(
            configuration: EngineConfiguration(settings: settings, filter: filter), historyCapacity: historyCapacity)
    }

    /// Applies new filters (SIGHUP): deliveries from now on are judged by them.
    public mutating func updateFilter(_ filter: DeliveryFilter) {
        configuration = configuration.replacing(filter: filter)
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
            if let reason = configuration.filter.rejection(
                repository: delivery.repository.fullName, workflow: run.name.flatMap { $0.isEmpty ? nil : $0 },
                branch: run.headBranch, event: run.event)
            {
                return .ignored(reason: reason)
            }
            let key = RunKey(repository: delivery.repository.fullName, runID: run.id, attempt: run.runAttempt)
            try update(key, repository: delivery.repository, at: now, provider: provider) { state in
                var changed = state.apply(run)
                // A run held for a maintainer's approval has not run (`CardWithholding`): it
                // ends only when it ran, and an approval moves it on from the held snapshot.
                let merged = state.run ?? run
                if merged.status != .completed || state.isHeldForApproval {
                    if state.completion?.source == .runEvent {
                        state.completion = nil
                        changed = true
                    }
                } else if state.completion?.source != .runEvent {
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
            if let reason = configuration.filter.rejection(
                repository: delivery.repository.fullName, workflow: job.workflowName ?? runBook[key]?.workflowName,
                branch: job.headBranch, event: runBook[key]?.run?.event)
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
        if runBook[key] == nil { cardBook.recordArrival(at: now, changes: &changes) }
        var state: RunState
        if let held = runBook[key] {
            state = held
        } else {
            state = try newRun(key, repository: repository, at: now, provider: provider)
        }
        let before = state
        if change(&state) { state.lastChangeAt = now }
        try resolveHistory(&state, provider: provider)
        runBook.store(state, changes: &changes)
        scheduleRunnerWait(key)
        let slug = runBook.draw(
            key,
            on: runBook.slugs[key]
                ?? ActivityIdentity.forRun(
                    repository: repository, workflow: state.workflowName, scope: configuration.settings.scope,
                    person: configuration.route(for: state).person
                ).slug)
        if cardBook[slug] == nil, let card = try provider.storedSession(slug: slug) {
            restore(session: card.session, floor: card.floor)
        }
        if state.completion != nil { runBook.recordHistory(for: key, changes: &changes) }
        // Approved after its card said "Needs approval" and was let go of: it runs now.
        if before.isHeldForApproval, !state.isHeldForApproval { runBook.contendAgain(key, changes: &changes) }
        reassignActivities(slug)
        followWidgets(key)
        if configuration.notifies {
            let reasons = AlertBook.transitions(from: before, to: state)
            if !reasons.isEmpty { try planAlerts(key, reasons: reasons, provider: provider) }
        }
    }

    /// Puts back a run the engine let go of, when storage has it: a late delivery then moves the
    /// run as it stood, not a blank one.
    private mutating func recall<Provider: HistoryProvider>(_ key: RunKey, from provider: Provider)
        throws(Provider.Failure)
    {
        guard runBook[key] == nil, let stored = try provider.storedRun(key) else { return }
        restore(run: stored.state, slug: stored.slug, released: stored.released)
    }

    /// Puts back a run read from storage.
    public mutating func restore(run state: RunState, slug: String, released isReleased: Bool) {
        runBook.restore(state, slug: slug, released: isReleased)
        scheduleRunnerWait(state.key)
        slots.markStale()
    }

    /// Puts back a card read from storage.
    public mutating func restore(session: ActivitySession, floor: ProgressFloor?) {
        cardBook.restore(session, floor: floor)
        slots.markStale()
    }

    /// Puts back the dispatch gate read from storage.
    public mutating func restore(gate: DispatchGate) {
        dispatch.restore(gate: gate)
    }

    /// Puts back an hour's count of new runs read from storage (the budget planner's forecast).
    public mutating func restoreArrivals(hour: Int, runs count: Int) {
        cardBook.restoreArrivals(at: Double(hour) * 3_600, count: count)
    }

    /// Puts back a widget read from storage.
    public mutating func restore(widget session: WidgetSession) {
        widgetBook.restore(session)
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
    /// Whether PushWard still holds the card's ended activity for reuse, as far as the bridge
    /// knows: created by it, not deleted, ended within PushWard's retention (`retainedEndedTTL`).
    public static func isRetained(_ session: ActivitySession, at now: UnixTime) -> Bool {
        isDeletable(session) && session.serverIdentity != nil
            && endedAt(session) > now - ActivitySettings.reuseWithin
    }

    public mutating func forget(at now: UnixTime) {
        let settings = configuration.settings
        let idleCards = cardBook.slugs { slug, session in
            // An activity still to be deleted keeps its card (and its run) in memory until it is,
            // and so does one PushWard still holds for reuse, while it may (`retainedEndedTTL`):
            // the account holds 50 at most, so these are few, and the oldest of them are what
            // `tidyAccount` deletes when the account nears the cap.
            session.phase == .ended && runBook.contenders(of: slug).isEmpty && !changes.slugs.contains(slug)
                && session.updates(inHourBefore: now).isEmpty && Self.deletionDue(session, settings: settings) == nil
                && !Self.isRetained(session, at: now)
        }
        for slug in idleCards {
            cardBook.forget(slug)
            runBook.forgetCard(slug)
            slots.forget(slug)
        }
        // A run silent for longer than GitHub lets a run last lost its last deliveries and will
        // never change: done with its card (written as released, so a start skips it), then let go.
        // An ended card holds no run: its last owner is done with it, even while PushWard keeps
        // the activity for reuse.
        let holder: (String) -> RunKey? = { [cardBook] slug in
            cardBook[slug].flatMap { $0.phase == .ended ? nil : $0.owner }
        }
        let abandoned = runBook.abandoned(before: now - Self.abandonedAfter, holder: holder)
        for (key, slug) in abandoned {
            runBook.release(key, slug: slug, changes: &changes)
        }
        let finished = runBook.finished(
            before: now - Self.finishedRunGrace, abandonedAfter: Self.abandonedAfter, pending: changes,
            holder: holder)
        for (key, slug) in finished { runBook.letGo(key, slug: slug) }
        cardBook.pruneArrivals(at: now)
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
        // Storage holds the attempts the engine let go of; one the engine still holds is newer.
        var earlier = runBook.latestAttempt(before: key)
        if let stored = try provider.latestAttempt(repository: key.repository, runID: key.runID, below: key.attempt),
            runBook[stored.key] == nil, stored.key.attempt > earlier?.key.attempt ?? 0
        {
            earlier = stored
        }
        if let earlier, let conclusion = earlier.completion?.conclusion,
            AlertReason.failedConclusions.contains(conclusion)
        {
            state.failedBefore = earlier.workflowJobs.filter(\.failed).map(\.name).sorted()
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
        if let held = runBook.cachedHistory(entry) { return held }
        var loaded = RunHistory(summaries: try provider.finishedRuns(repository: repository, workflow: workflow))
        for summary in changes.history.values where summary.key.repository == repository && summary.workflow == workflow
        {
            loaded.record(summary)
        }
        runBook.cache(loaded, for: entry)
        return loaded
    }
}
