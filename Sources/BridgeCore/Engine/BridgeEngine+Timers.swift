extension BridgeEngine {
    /// Moves time to `now`: a run whose jobs all finished and that heard nothing for the grace
    /// period is taken as finished (its `completed` delivery was lost), and a job queued past
    /// `runner_wait` or a rule's `queued_after` is noticed (`noticeRunnerWaits`).
    public mutating func advance(to now: UnixTime) {
        for (key, due) in runBook.dueCompletions(at: now) {
            guard let state = runBook.completeByGrace(key, at: due, changes: &changes) else { continue }
            runBook.recordHistory(for: key, changes: &changes)
            if let slug = runBook.slugs[key] { reassignActivities(slug) }
            followWidgets(key)
            if configuration.alerts.isEnabled, let finished = runBook[key] {
                alertBook.check(key, for: AlertBook.transitions(from: state, to: finished))
            }
            scheduleRunnerWait(key)
        }
        noticeRunnerWaits(at: now)
    }

    /// The earliest time after `now` at which something is due: a completion by grace, or a card's
    /// recorded time (end frame, throttle window, retry, end, heartbeat), or a queued job's
    /// crossing of `runner_wait` or `queued_after`, or the dispatch gate's
    /// reopening, or room in the pacer for what it held. Nil when nothing is. Cheap: it reads what
    /// `decide` recorded, deciding nothing; the dispatcher asks after every group commit.
    public func nextWakeup(after now: UnixTime) -> UnixTime? {
        [
            dispatch.nextWakeup(after: now), runBook.nextCompletion(after: now), cardBook.nextDue(after: now),
            runBook.waits.next(after: now),
        ]
        .compactMap { $0 }.min()
    }
}

extension BridgeEngine {
    /// Runs not finished that heard nothing since `before`, the quietest first, at most `limit`:
    /// what recovery asks GitHub's API about (`github.api.stale_after`).
    public func quietRuns(since before: UnixTime, limit: Int) -> [RunKey] {
        runBook.quietRuns(since: before, limit: limit)
    }

    /// GitHub's API said the run goes on (nothing new in it): as a delivery would, this starts its
    /// quiet period and its completion grace again, so a run waiting for a runner is not taken as
    /// finished by the guess the lookup replaces.
    public mutating func heardFromAPI(_ key: RunKey, at now: UnixTime) {
        runBook.heardFromAPI(key, at: now, changes: &changes)
    }
}
