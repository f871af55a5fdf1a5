extension BridgeEngine {
    /// The run that should hold each card: the newest run on the slug that still needs it. A run
    /// that finishes while another holds the card is done with it; when the holder ends, the newest
    /// run still in progress takes the card over.
    mutating func reassignActivities(_ slugsToCheck: String...) {
        for slug in slugsToCheck {
            // Whatever happens to the card, its person's slots are planned again.
            defer { noteSlotChange(slug) }
            dirtySlugs.insert(slug)
            let owner = sessions[slug]?.owner
            // A run that finished while another one held the card has nothing left to show.
            // (An owner no longer held was let go of after it was done with the card.)
            if let owner, !released.contains(owner), runs[owner] != nil {
                for key in contendersBySlug[slug] ?? [] where key != owner && runs[key]?.completion != nil {
                    release(key, slug: slug)
                }
            }
            // The newest contender takes the card, unless the budget gives it none: then it is
            // done with the card, and the next newest is considered.
            while true {
                var newest: (key: RunKey, order: (UnixTime, Int, Int))?
                for key in contendersBySlug[slug] ?? [] {
                    guard let state = runs[key] else { continue }
                    let order = (state.attemptStartedAt, key.runID, key.attempt)
                    if newest.map({ $0.order < order }) ?? true { newest = (key, order) }
                }
                guard let newestKey = newest?.key, newestKey != owner, let newest = runs[newestKey] else { break }
                let route = route(for: newest)
                if route == .nobody {
                    // `routing.default: nobody` and nobody the run maps to: no card, said as a decision.
                    runs[newestKey]?.cardDecision = CardDecision(
                        level: nil, reason: "routing sends runs that map to no one to nobody",
                        decidedAt: newest.lastChangeAt, remaining: nil, forecastRuns: nil)
                    changes.runs.insert(newestKey)
                    release(newestKey, slug: slug)
                    continue
                }
                let decision = budgetDecision(for: newestKey)
                if let decision {
                    runs[newestKey]?.cardDecision = decision
                    changes.runs.insert(newestKey)
                }
                if let decision, decision.level == nil {
                    release(newestKey, slug: slug)
                    continue
                }
                let identity = ActivityIdentity.forRun(
                    repository: newest.repository, workflow: newest.workflowName, scope: settings.scope)
                var session =
                    sessions[slug] ?? ActivitySession(identity: ActivityIdentity(slug: slug, name: identity.name))
                let target = gate.targetsRefusedAt == nil ? route.target : nil
                session.identity = ActivityIdentity(slug: slug, name: identity.name, target: target)
                session.assign(to: newest.key)
                session.fidelity = decision?.level
                sessions[slug] = session
                progressFloors[slug] = nil
                changes.slugs.insert(slug)
                break
            }
        }
    }

    /// The budget planner's choice for a run about to take a card, or nil when it has no say: a
    /// level is configured, or the budget is unknown or unlimited.
    mutating func budgetDecision(for run: RunKey) -> CardDecision? {
        guard settings.fidelity == .auto, let budget, budget.limit != nil, let state = runs[run] else { return nil }
        let now = state.lastChangeAt
        arrivals.prune(at: now)
        let onCards = sessions.values.filter { $0.owner != nil && $0.phase != .ended }.count
        let decision = BudgetPlanner.decide(
            run: run, budget: budget,
            arrivalsPerSecond: arrivals.rate(at: now, priorPerDay: BudgetPlanner.priorRunsPerDay),
            runsHoldingActivities: onCards, inForce: levelInForce, at: now)
        if let level = decision.level { levelInForce = level }
        return decision
    }

    /// What the card on `slug` should show at `now`; nil when no run holds it.
    public func desired(slug: String, at now: UnixTime) -> DesiredActivity? {
        if SummaryCard.isSummary(slug) { return summaryDesired(slug: slug) }
        guard let owner = sessions[slug]?.owner, let state = runs[owner] else { return nil }
        let plan = StepPlanner.plan(for: state)
        let builder = ActivityContentBuilder(settings: settings)
        guard let completion = state.completion, now >= completion.recognizedAt + settings.endDelay else {
            return builder.desired(
                for: state, plan: plan, end: nil, actions: actionSettings, offers: offers(for: state))
        }
        let end = EndAppearance.forConclusion(
            completion.conclusion, failedStep: plan.firstFailedGroup.map { ActivityContentBuilder.label($0.name) },
            supersededBy: supersedingRunNumber(of: state))
        return builder.desired(for: state, plan: plan, end: end, actions: actionSettings, offers: offers(for: state))
    }

    /// The number of a newer run of the same workflow and branch, for a cancelled run.
    func supersedingRunNumber(of state: RunState) -> Int? {
        guard state.completion?.conclusion == "cancelled", let workflow = state.workflowName else { return nil }
        let newer = runs.values.filter {
            $0.key.repository == state.key.repository && $0.key.runID != state.key.runID
                && $0.workflowName == workflow && $0.headBranch == state.headBranch && $0.origin == state.origin
                && $0.attemptStartedAt > state.attemptStartedAt
        }
        guard let newest = newer.max(by: { ($0.attemptStartedAt, $0.key.runID) < ($1.attemptStartedAt, $1.key.runID) })
        else { return nil }
        return newest.run?.runNumber ?? newest.key.runID
    }

    /// The next request for what the card on `slug` shows at `now`, or when to ask again; `decide`
    /// puts a due deletion ahead of it (`BridgeEngine+Removal.swift`).
    mutating func decideContent(slug: String, at now: UnixTime) -> ReconcileDecision {
        planSlots(at: now)
        if let quietUntil = throttledUntil(slug: slug, at: now) {
            slugDue[slug] = quietUntil
            return .wait(until: quietUntil)
        }
        // A run without one of its person's slots sends nothing (`BridgeEngine+Slots`).
        if let gated = slotGate(slug: slug, at: now) {
            slugDue[slug] = gated.dueAt
            return slotAdjusted(gated, slug: slug)
        }
        guard let session = sessions[slug], var desired = desired(slug: slug, at: now) else {
            slugDue[slug] = nil
            return .idle
        }
        if !desired.isFinal { applyProgressFloor(to: &desired, slug: slug) }
        let decision = slotAdjusted(
            Reconciler.decide(session: session, desired: desired, settings: settings, now: now), slug: slug)
        // A held change: coalescing and settling count from when it was first seen.
        if case .hold(_, let reason) = decision, reason != .hourlyCap, session.pendingSince == nil {
            sessions[slug]?.pendingSince = now
            changes.slugs.insert(slug)
        }
        // When to look again if nothing happens: the reconciler's own wait, or the end frame.
        var due = decision.dueAt
        if !desired.isFinal, let owner = session.owner, let completion = runs[owner]?.completion {
            let endFrameAt = completion.recognizedAt + settings.endDelay
            due = min(due ?? endFrameAt, endFrameAt)
        }
        slugDue[slug] = due
        return decision
    }

    /// When a card inside its throttle window (live, or waiting for its first frame) can next send
    /// anything, found without building its content; nil when deciding needs the content (no
    /// window, a retry pending, or the end frame due).
    ///
    /// Building the content is most of what deciding costs, and under load every group of
    /// deliveries makes most cards dirty while they wait out `min_update_interval`. Before this
    /// time the reconciler could send nothing: no update, first or full frame (throttled), no
    /// heartbeat (due later), no end frame (not due yet), so the full decision is taken then.
    func throttledUntil(slug: String, at now: UnixTime) -> UnixTime? {
        // A first frame or a full frame is throttled like an update (only an end frame is not).
        guard let session = sessions[slug], session.phase == .live || session.phase == .needsFirstFrame,
            session.retryAt.map({ now >= $0 }) ?? true,
            let last = session.lastPatchAt, now < last + settings.minUpdateInterval,
            let owner = session.owner, let state = runs[owner]
        else { return nil }
        var until = min(
            last + settings.minUpdateInterval, last + Double(Reconciler.staleTTL(session, settings)) / 2)
        if let completion = state.completion {
            let endFrameAt = completion.recognizedAt + settings.endDelay
            guard now < endFrameAt else { return nil }
            until = min(until, endFrameAt)
        }
        return until
    }

    /// A run is done with its card: it never takes it again.
    mutating func release(_ key: RunKey, slug: String) {
        released.insert(key)
        contendersBySlug[slug]?.remove(key)
        changes.runs.insert(key)
    }

    /// The cards to decide at `now`: those something happened to, and those whose recorded time
    /// came. They leave both lists; deciding records their next time again.
    public mutating func takeDueSlugs(at now: UnixTime) -> [String] {
        planSlots(at: now)
        var due = dirtySlugs
        for (slug, time) in slugDue where time <= now { due.insert(slug) }
        dirtySlugs.removeAll()
        for slug in due { slugDue[slug] = nil }
        return due.sorted()
    }

    /// Puts cards back to be decided later (the dispatch gate held them back).
    public mutating func markDirty<S: Sequence>(_ slugs: S) where S.Element == String {
        dirtySlugs.formUnion(slugs)
    }

    /// Records PushWard's 2xx for a planned request; a card that ended passes to the next run.
    public mutating func acknowledge(_ planned: PlannedRequest, at now: UnixTime) {
        guard planned.kind != .delete else { return acknowledgeDeletion(planned, at: now) }
        let slug = planned.request.slug
        // PushWard counted it, even if the card changed hands meanwhile: the run's cost, and the
        // planner's figure between two reads of /auth/me (the daemon's, `render`'s and
        // `explain`'s replays all count here).
        budget?.used += 1
        if let spent = runs[planned.run].map({ $0.updatesSpent ?? 0 }) {
            runs[planned.run]?.updatesSpent = spent + 1
            changes.runs.insert(planned.run)
        }
        guard let session = sessions[slug], session.owner == planned.run else { return }
        var updated = Reconciler.acknowledge(planned, session: session, settings: settings, at: now)
        if let priority = planned.request.body["priority"]?.intValue { updated.priority = priority }
        sessions[slug] = updated
        changes.slugs.insert(slug)
        dirtySlugs.insert(slug)
        if updated.phase == .ended, let owner = updated.owner, owner != SummaryCard.owner {
            release(owner, slug: slug)
            reassignActivities(slug)
        }
    }

    /// Keeps `progress` from moving back within an attempt: per step when the card is weighted
    /// (each step fills from 0), over the whole run when not.
    private mutating func applyProgressFloor(to desired: inout DesiredActivity, slug: String) {
        guard let progress = desired.content["progress"]?.doubleValue, let step = desired.currentStep else { return }
        let weighted = desired.content["step_weights"] != nil
        let floorStep = weighted ? step : 0
        var value = progress
        if let floor = progressFloors[slug], floor.run == desired.run, floor.step == floorStep {
            value = max(value, floor.progress)
        }
        desired.content["progress"] = .number(value)
        let floor = ProgressFloor(run: desired.run, step: floorStep, progress: value)
        if progressFloors[slug] != floor {
            progressFloors[slug] = floor
            changes.slugs.insert(slug)
        }
    }
}
