extension BridgeEngine {
    /// Plans the alerts the timers found since the last call (runs that finished by the grace
    /// period, jobs queued past a rule's `queued_after`): the daemon calls this after
    /// `dueRequests`, with the same history it gives `receive`.
    public mutating func planAlerts<Provider: HistoryProvider>(history provider: Provider)
        throws(Provider.Failure)
    {
        for (key, reasons) in alertBook.pending {
            try planAlerts(key, reasons: reasons, provider: provider)
            alertBook.planned(key)
        }
    }

    /// Adds to `changes.alerts` the notifications `reasons` call for under the rules. "fixed"
    /// holds only when the newest earlier decisive run of the workflow on the branch failed.
    mutating func planAlerts<Provider: HistoryProvider>(
        _ key: RunKey, reasons candidates: Set<AlertReason>, provider: Provider
    ) throws(Provider.Failure) {
        guard configuration.notifies, let state = runBook[key], configuration.route(for: state) != .nobody
        else { return }
        let subject = AlertSubject(state)
        let offers = configuration.offers(for: state)
        var reasons = candidates.filter { reason in
            configuration.alerts.rules.contains { $0.matches(reason, subject) }
                || (reason == .waiting && offers.contains(.approve))
        }
        let reviews = reasons.contains(.waiting) && offers.contains(.approve)
        if reasons.contains(.fixed), try !fixesFailure(key, state: state, provider: provider) {
            reasons.remove(.fixed)
        }
        append(key, state: state, reasons: reasons, subject: subject, offers: offers)
        if reviews { appendReviews(key, state: state) }
    }

    private mutating func append(
        _ key: RunKey, state: RunState, reasons: Set<AlertReason>, subject: AlertSubject, offers: Set<ActionKind>
    ) {
        // The run's card, when it has one: the sender names it in `activity_slug` once PushWard
        // has the activity (an unknown slug is a 422), waiting a little for its create if need be.
        let slug = cardSlug(of: key)
        let target = dispatch.targetsRefused ? nil : configuration.route(for: state).target
        // Approve and Reject go to the approvers alone (`appendReviews`), never with the run's alert.
        let offers = offers.subtracting([.approve, .reject])
        for (reason, level) in configuration.alerts.alerts(for: reasons.sorted(), subject) {
            changes.alerts.append(
                PlannedAlert(
                    run: key, reason: reason,
                    body: AlertContent.body(
                        for: reason, state: state, level: level, target: target,
                        actions: AlertBook.notificationActions(
                            for: reason, offers: offers, settings: configuration.actions)),
                    activitySlug: slug))
        }
    }

    /// A review the `actions` rules offer buttons for: one notification per approver (or, without
    /// routing, one for them all), with Approve and Reject, asked for even without an alert rule.
    private mutating func appendReviews(_ key: RunKey, state: RunState) {
        let slug = cardSlug(of: key)
        let actions = AlertBook.notificationActions(
            for: .waiting, offers: [.approve, .reject], settings: configuration.actions)
        var reviewers = configuration.reviewers(for: state)
        // A key that refused targets reaches one person: one notification stands for them all.
        if dispatch.targetsRefused, reviewers.count > 1 {
            reviewers = [Reviewer(login: nil, target: nil, approvers: reviewers.flatMap(\.approvers))]
        }
        for reviewer in reviewers {
            changes.alerts.append(
                PlannedAlert(
                    run: key, reason: .waiting,
                    body: AlertContent.body(
                        for: .waiting, state: state, level: .active,
                        target: dispatch.targetsRefused ? nil : reviewer.target, actions: actions),
                    activitySlug: slug, recipient: reviewer.recipient))
        }
    }

    /// The card `key`'s run holds, when it holds one: an alert names it in `activity_slug`.
    func cardSlug(of key: RunKey) -> String? {
        runBook.slugs[key].flatMap { cardBook[$0]?.owner == key ? $0 : nil }
    }

    /// Whether the newest earlier decisive run of the workflow on the run's branch failed. A fork's
    /// branch is its own (`historyBranch`), so a fork's success never answers the repository's
    /// failure; a run of unknown origin fixes nothing.
    private func fixesFailure<Provider: HistoryProvider>(_ key: RunKey, state: RunState, provider: Provider)
        throws(Provider.Failure) -> Bool
    {
        guard let workflow = state.workflowName, let branch = state.historyBranch else { return false }
        let previous = try previousDecisiveConclusion(
            key, workflow: workflow, branch: branch, before: state.run?.updatedAt ?? state.lastChangeAt,
            provider: provider)
        return previous.map(AlertReason.failedConclusions.contains) ?? false
    }

    /// The newest decisive conclusion of another attempt of the workflow on the branch, finished
    /// by `before`: from the runs recorded since the last `takeChanges()` (storage has not seen
    /// them yet) and from the provider.
    private func previousDecisiveConclusion<Provider: HistoryProvider>(
        _ key: RunKey, workflow: String, branch: String, before: UnixTime, provider: Provider
    ) throws(Provider.Failure) -> String? {
        let pending = changes.history.values.filter {
            $0.key != key && $0.key.repository == key.repository && $0.workflow == workflow && $0.branch == branch
                && $0.finishedAt <= before && AlertReason.isDecisive($0.conclusion)
        }.max { ($0.finishedAt, $0.key) < ($1.finishedAt, $1.key) }
        let stored = try provider.lastDecisiveRun(
            repository: key.repository, workflow: workflow, branch: branch, before: before, excluding: key)
        switch (pending, stored) {
        case (let pending?, let stored?):
            return pending.finishedAt >= stored.finishedAt ? pending.conclusion : stored.conclusion
        case (let pending?, nil): return pending.conclusion
        case (nil, let stored?): return stored.conclusion
        case (nil, nil): return nil
        }
    }
}
