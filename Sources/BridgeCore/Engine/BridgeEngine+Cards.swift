extension BridgeEngine {
    /// The run that should hold each card: the newest run on the slug that still needs it. A run
    /// that finishes while another holds the card is done with it; when the holder ends, the newest
    /// run still in progress takes the card over.
    mutating func reassignActivities(_ slugsToCheck: String...) {
        for slug in slugsToCheck {
            // Whatever happens to the card, its person's slots are planned again.
            defer { noteSlotChange(slug) }
            cardBook.markDirty(slug)
            let owner = cardBook[slug]?.owner
            // A run that finished while another one held the card has nothing left to show.
            // (An owner no longer held was let go of after it was done with the card.)
            if let owner, !runBook.released.contains(owner), runBook[owner] != nil {
                for key in runBook.contenders(of: slug) where key != owner && runBook[key]?.completion != nil {
                    release(key, slug: slug)
                }
            }
            // The newest contender takes the card, unless the budget gives it none: then it is
            // done with the card, and the next newest is considered.
            while true {
                var newest: (key: RunKey, order: (UnixTime, Int, Int))?
                for key in runBook.contenders(of: slug) {
                    // A run withheld now (held for approval, a fork with `forks: false`) is not let
                    // go of: it is considered again when a delivery moves it.
                    guard let state = runBook[key], CardWithholding.of(state, filter: configuration.filter) == nil
                    else { continue }
                    let order = (state.attemptStartedAt, key.runID, key.attempt)
                    if newest.map({ $0.order < order }) ?? true { newest = (key, order) }
                }
                // The owner takes its card again only after it ended: a run approved after its
                // card said "Needs approval" (`CardWithholding`).
                guard let newestKey = newest?.key, newestKey != owner || cardBook[slug]?.phase == .ended,
                    let newest = runBook[newestKey]
                else { break }
                let route = configuration.route(for: newest)
                if route == .nobody {
                    // `routing.default: nobody` and nobody the run maps to: no card, said as a decision.
                    runBook.record(
                        CardDecision(
                            level: nil, reason: "routing sends runs that map to no one to nobody",
                            decidedAt: newest.lastChangeAt, remaining: nil, forecastRuns: nil),
                        for: newestKey, changes: &changes)
                    release(newestKey, slug: slug)
                    continue
                }
                let decision = cardBook.budgetDecision(for: newest, settings: configuration.settings)
                if let decision { runBook.record(decision, for: newestKey, changes: &changes) }
                if let decision, decision.level == nil {
                    release(newestKey, slug: slug)
                    continue
                }
                let identity = ActivityIdentity.forRun(
                    repository: newest.repository, workflow: newest.workflowName, scope: configuration.settings.scope)
                var session =
                    cardBook[slug] ?? ActivitySession(identity: ActivityIdentity(slug: slug, name: identity.name))
                let target = dispatch.targetsRefused ? nil : route.target
                session.identity = ActivityIdentity(slug: slug, name: identity.name, target: target)
                // PushWard deletes an ended activity `retainedEndedTTL` after its end: one that
                // ended nearly that long ago is created again rather than met with a 404.
                if let ended = session.endedAt, newest.lastChangeAt - ended > ActivitySettings.reuseWithin {
                    session.serverIdentity = nil
                }
                session.assign(to: newest.key)
                session.fidelity = decision?.level
                cardBook.put(session, on: slug, changes: &changes)
                cardBook.clearFloor(slug)
                break
            }
        }
    }

    /// What the card on `slug` should show at `now`; nil when no run holds it.
    public func desired(slug: String, at now: UnixTime) -> DesiredActivity? {
        if SummaryCard.isSummary(slug) { return summaryDesired(slug: slug) }
        guard let owner = cardBook[slug]?.owner, let state = runBook[owner] else { return nil }
        let settings = configuration.settings
        let plan = StepPlanner.plan(for: state)
        let builder = ActivityContentBuilder(settings: settings)
        let offers = configuration.offers(for: state)
        // A run GitHub held for approval after it took its card (a queued delivery came first):
        // the card ends saying so, and the run takes one again when it is approved.
        if state.isHeldForApproval {
            let end = EndAppearance.forConclusion("action_required", failedStep: nil, supersededBy: nil)
            return builder.desired(for: state, plan: plan, end: end, actions: configuration.actions, offers: offers)
        }
        guard let completion = state.completion, now >= completion.recognizedAt + settings.endDelay else {
            return builder.desired(for: state, plan: plan, end: nil, actions: configuration.actions, offers: offers)
        }
        // GitHub concludes a run whose every job was skipped `success`: it is no success to show.
        let conclusion = state.allJobsSkipped && completion.conclusion == "success" ? "skipped" : completion.conclusion
        let failure = FailureSummary.of(plan)
        var end =
            state.passedOnRerun
            ? EndAppearance(state: "Passed on re-run (attempt \(state.key.attempt))", accentColor: "green")
            : EndAppearance.forConclusion(
                conclusion, failedStep: failure?.text, supersededBy: runBook.supersedingRunNumber(of: state))
        // A failed run's card opens the failing job, where the error is.
        if AlertReason.failedConclusions.contains(conclusion), let url = failure?.jobURL, LinkURL.isAcceptable(url) {
            end.link = url
        }
        return builder.desired(for: state, plan: plan, end: end, actions: configuration.actions, offers: offers)
    }

    /// The number of a newer run of the same workflow and branch, for a cancelled run.
    func supersedingRunNumber(of state: RunState) -> Int? {
        runBook.supersedingRunNumber(of: state)
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
        let settings = configuration.settings
        // A first frame or a full frame is throttled like an update (only an end frame is not).
        guard let session = cardBook[slug], session.phase == .live || session.phase == .needsFirstFrame,
            session.retryAt.map({ now >= $0 }) ?? true,
            let last = session.lastPatchAt, now < last + settings.minUpdateInterval,
            let owner = session.owner, let state = runBook[owner]
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
        runBook.release(key, slug: slug, changes: &changes)
    }

    /// The cards to decide at `now`: those something happened to, and those whose recorded time
    /// came. They leave both lists; deciding records their next time again.
    public mutating func takeDueSlugs(at now: UnixTime) -> [String] {
        planSlots(at: now)
        return cardBook.takeDue(at: now)
    }

    /// Puts cards back to be decided later (the dispatch gate held them back).
    public mutating func markDirty<S: Sequence>(_ slugs: S) where S.Element == String {
        cardBook.markDirty(slugs)
    }

    /// Records PushWard's 2xx for a planned request; a card that ended passes to the next run.
    public mutating func acknowledge(_ planned: PlannedRequest, at now: UnixTime) {
        guard planned.kind != .delete else { return acknowledgeDeletion(planned, deleted: true, at: now) }
        let slug = planned.request.slug
        // A create of an activity the bridge did not know to exist takes one of the account's 50.
        if planned.kind == .create, cardBook[slug]?.serverIdentity == nil {
            cardBook.room.noteCreated()
            tidyAccount(at: now)
        }
        // PushWard counted it, even if the card changed hands meanwhile: the run's cost, and the
        // planner's figure between two reads of /auth/me (the daemon's, `render`'s and
        // `explain`'s replays all count here).
        cardBook.countUpdate()
        runBook.countUpdate(for: planned.run, changes: &changes)
        guard let session = cardBook[slug], session.owner == planned.run else { return }
        var updated = Reconciler.acknowledge(planned, session: session, settings: configuration.settings, at: now)
        if let priority = planned.request.body["priority"]?.intValue { updated.priority = priority }
        cardBook.update(slug, changes: &changes) { $0 = updated }
        if updated.phase == .ended, let owner = updated.owner, owner != SummaryCard.owner {
            // An owner approved while its "Needs approval" card ended still runs: not let go of.
            let running = runBook[owner].map { $0.completion == nil && !$0.isHeldForApproval } ?? false
            if !running { release(owner, slug: slug) }
            reassignActivities(slug)
        }
    }
}
