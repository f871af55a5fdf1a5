extension BridgeEngine {
    /// The buttons the `actions` rules give `state`'s run; none without the section, for a run
    /// routed to nobody, or for a run not known to be the repository's own: a fork's author wrote
    /// what a button would cancel, approve or re-run (SECURITY.md, "Forks").
    public func offers(for state: RunState) -> Set<ActionKind> {
        configuration.offers(for: state)
    }

    /// The state of `key` as the engine holds it or storage kept it (read back into the engine,
    /// with its card): what a pressed button is checked against.
    public mutating func actionSubject<Provider: HistoryProvider>(_ key: RunKey, history provider: Provider)
        throws(Provider.Failure) -> RunState?
    {
        try recallWithCard(key, from: provider)
        return runBook[key]
    }

    /// Why `kind` no longer makes sense for `key` (nil: it does): a re-run only of a failed,
    /// finished attempt with no newer one, a cancel only while the attempt goes, a review only
    /// while a job waits on the environment. `newerAttemptStored` is what storage knows beyond memory.
    public func actionProblem(_ kind: ActionKind, on key: RunKey, environment: String?, newerAttemptStored: Bool)
        -> String?
    {
        guard let state = runBook[key] else { return "the run is not known any more" }
        guard state.origin.isBase else {
            return state.origin == .unknown ? "the run is not known to be the repository's own" : "the run is a fork's"
        }
        switch kind {
        case .rerun:
            guard let conclusion = state.completion?.conclusion, AlertReason.failedConclusions.contains(conclusion)
            else { return "the attempt did not fail, or has not finished" }
            if newerAttemptStored || hasNewerAttempt(than: key) { return "a newer attempt has started" }
            return nil
        case .cancel:
            return state.completion == nil ? nil : "the attempt has ended"
        case .approve, .reject:
            guard state.completion == nil else { return "the attempt has ended" }
            // A review answers one named environment; a button without one (minted before names
            // were required) would have answered every pending deployment.
            guard let environment, !environment.isEmpty else { return "the button names no environment" }
            // A job whose deliveries never named its environment may wait on this one: the name
            // came from GitHub's own list, which the press asks again before it acts.
            let waiting = state.jobs.values.contains { job in
                job.isWaiting && (job.waitingEnvironment == environment || job.waitingEnvironment?.isEmpty != false)
            }
            return waiting ? nil : "no job waits for that review any more"
        }
    }

    /// Who a run's buttons go to: the routed person's login (and the PushWard member it maps to),
    /// else the routing target, else nil (everyone the key reaches).
    public func recipient(of state: RunState) -> (person: String?, description: String?) {
        let route = configuration.route(for: state)
        let target = route.target.map(\.description)
        guard let person = route.person else { return (nil, target) }
        return (person, target.map { "\(person) (\($0))" } ?? person)
    }

    /// The environment a review button of the run answers: the first waiting job's.
    public func waitingEnvironment(of key: RunKey) -> String? {
        runBook[key]?.workflowJobs.first(where: \.isWaiting)?.waitingEnvironment
    }

    /// The one environment a review button of `key` may be minted for, nil when none may: the
    /// first environment a waiting job's delivery named (its `deployment` object), else, when no
    /// delivery named one, the only environment in GitHub's pending-deployments answer
    /// (`pending`: the names it listed, nil when it was not or could not be asked). Several
    /// pending and none named: no button, since nothing says which one the job waits on, and a
    /// button approves exactly one. An empty name never gets a button.
    public func reviewEnvironment(of key: RunKey, pending: [String]?) -> String? {
        guard let jobs = runBook[key]?.workflowJobs.filter(\.isWaiting), !jobs.isEmpty else { return nil }
        if let named = jobs.lazy.compactMap(\.waitingEnvironment).first(where: { !$0.isEmpty }) { return named }
        let listed = Set((pending ?? []).filter { !$0.isEmpty })
        return listed.count == 1 ? listed.first : nil
    }

    /// Whether minting a review button for `key` needs GitHub's pending deployments: a job waits
    /// and no delivery named the environment.
    public func reviewNeedsPendingDeployments(_ key: RunKey) -> Bool {
        runBook[key]?.completion == nil && reviewEnvironment(of: key, pending: nil) == nil
            && runBook[key]?.workflowJobs.contains(where: \.isWaiting) == true
    }

    /// Whether a newer attempt of `key`'s run is known: a re-run button of an older one is dead.
    public func hasNewerAttempt(than key: RunKey) -> Bool {
        runBook.hasNewerAttempt(than: key)
    }

    /// Records what became of a pressed button: the card says `text` until a delivery changes the
    /// run, and a refusal (`failed`) also plans an alert, so a refused action is never silent.
    public mutating func noteAction<Provider: HistoryProvider>(
        _ kind: ActionKind, on key: RunKey, text: String, failed: Bool, at now: UnixTime, history provider: Provider
    ) throws(Provider.Failure) {
        try recallWithCard(key, from: provider)
        guard let state = runBook[key] else { return }
        // GitHub's message and a person's name reach a card and a notification: one line, no bidi.
        runBook.record(
            ActionNote(kind: kind, text: CardText.plain(text), failed: failed, at: max(now, state.lastChangeAt)),
            for: key, changes: &changes)
        if let slug = runBook.slugs[key] {
            cardBook.markDirty(slug)
            changes.slugs.insert(slug)
        }
        guard failed, let updated = runBook[key] else { return }
        let slug = cardSlug(of: key)
        let target = dispatch.targetsRefused ? nil : configuration.route(for: updated).target
        changes.alerts.append(
            PlannedAlert(
                run: key, reason: .actionFailed,
                body: AlertContent.body(for: .actionFailed, state: updated, level: .active, target: target),
                activitySlug: slug))
    }

    /// `recall`, and the run's card when the engine let go of it (an ended, idle card).
    private mutating func recallWithCard<Provider: HistoryProvider>(_ key: RunKey, from provider: Provider)
        throws(Provider.Failure)
    {
        guard runBook[key] == nil, let stored = try provider.storedRun(key) else { return }
        restore(run: stored.state, slug: stored.slug, released: stored.released)
        if cardBook[stored.slug] == nil, let card = try provider.storedSession(slug: stored.slug) {
            restore(session: card.session, floor: card.floor)
        }
    }
}
