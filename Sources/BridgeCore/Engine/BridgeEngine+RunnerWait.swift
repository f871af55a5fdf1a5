extension BridgeEngine {
    /// Notices the queued jobs that crossed a threshold by `now` (`RunnerWaitBook`): the card says
    /// the wait once, with the job's labels, and a run covered by an alert rule naming `queued`
    /// is checked for its alert, planned with the others (`planAlerts(history:)`).
    mutating func noticeRunnerWaits(at now: UnixTime) {
        for key in runBook.waits.dueRuns(at: now) {
            guard let state = runBook[key] else {
                runBook.scheduleWait(key, at: nil)
                continue
            }
            if let wait = RunnerWaitBook.crossing(state, at: now, runnerWait: configuration.settings.runnerWait) {
                runBook.record(wait, for: key, changes: &changes)
                if let slug = runBook.slugs[key] { reassignActivities(slug) }
            }
            if let after = queuedAlertAfter(state), RunnerWaitBook.alertDue(state, at: now, alertAfter: after) {
                runBook.recordQueuedAlert(for: key, at: now, changes: &changes)
                alertBook.check(key, for: [.queued])
            }
            scheduleRunnerWait(key)
        }
    }

    /// Records when `key`'s run next crosses a threshold, from its state as it stands now: called
    /// whenever the run's state is stored or restored.
    mutating func scheduleRunnerWait(_ key: RunKey) {
        runBook.scheduleWait(
            key,
            at: runBook[key].flatMap { state in
                // Called on every delivery: the rules are matched only for a run with a job waiting.
                guard RunnerWaitBook.longestQueued(state) != nil else { return nil }
                return RunnerWaitBook.nextCrossing(
                    state, runnerWait: configuration.settings.runnerWait, alertAfter: queuedAlertAfter(state))
            })
    }

    /// The shortest `queued_after` of the alert rules that cover the run's `queued` alert; nil
    /// when none does (or alerts are off), so no timer waits for an alert that would not go.
    func queuedAlertAfter(_ state: RunState) -> UnixTime? {
        guard configuration.alerts.isEnabled else { return nil }
        return configuration.alerts.queuedAfter(for: AlertSubject(state))
    }
}
