extension BridgeEngine {
    /// Moves time to `now`: a run whose jobs all finished and that heard nothing for the grace
    /// period is taken as finished (its `completed` delivery was lost).
    public mutating func advance(to now: UnixTime) {
        for (key, due) in completionDue.sorted(by: { ($0.value, $0.key) < ($1.value, $1.key) }) where due <= now {
            completionDue[key] = nil
            guard let state = runs[key], state.completion == nil else { continue }
            runs[key]?.completion = RunCompletion(
                conclusion: Self.inferredConclusion(StepPlanner.plan(for: state)), recognizedAt: due, source: .inferred)
            changes.runs.insert(key)
            recordHistory(for: key)
            if let slug = slugs[key] { reassignActivities(slug) }
            followWidgets(key)
            if alertSettings.isEnabled, let finished = runs[key] {
                let reasons = Self.alertTransitions(from: state, to: finished)
                if !reasons.isEmpty { alertChecks[key, default: []].formUnion(reasons) }
            }
        }
    }

    /// The earliest time after `now` at which something is due: a completion by grace, or a card's
    /// recorded time (end frame, throttle window, retry, end, heartbeat), or the dispatch gate's
    /// reopening, or room in the pacer for what it held. Nil when nothing is. Cheap: it reads what `decide` recorded, deciding nothing.
    /// The dispatcher asks after every group commit, so it walks the recorded times in place: copying
    /// them into arrays first cost 3 % of the daemon's CPU with some thousands of cards in flight.
    public func nextWakeup(after now: UnixTime) -> UnixTime? {
        var earliest = gate.blockedUntil(at: now).flatMap { $0 > now ? $0 : nil }
        func consider(_ time: UnixTime) {
            if time > now, earliest.map({ time < $0 }) ?? true { earliest = time }
        }
        for time in completionDue.values { consider(time) }
        for time in slugDue.values { consider(time) }
        // Requests the pacer had no room for wait for room, not for a card's own time.
        if let room = pacer?.nextWakeup(after: now) { consider(room) }
        return earliest
    }

    /// When a run with every job finished counts as finished without its `completed` delivery.
    func inferredCompletionDue(_ state: RunState) -> UnixTime? {
        let jobs = state.workflowJobs
        guard !jobs.isEmpty, jobs.allSatisfy(\.isFinished) else { return nil }
        return state.lastChangeAt + settings.completionGrace
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
}

extension BridgeEngine {
    /// Runs not finished that heard nothing since `before`, the quietest first, at most `limit`:
    /// what recovery asks GitHub's API about (`github.api.stale_after`).
    public func quietRuns(since before: UnixTime, limit: Int) -> [RunKey] {
        runs.values.filter { $0.completion == nil && $0.lastChangeAt < before }
            .sorted { ($0.lastChangeAt, $0.key) < ($1.lastChangeAt, $1.key) }.prefix(limit).map(\.key)
    }

    /// GitHub's API said the run goes on (nothing new in it): as a delivery would, this starts its
    /// quiet period and its completion grace again, so a run waiting for a runner is not taken as
    /// finished by the guess the lookup replaces.
    public mutating func heardFromAPI(_ key: RunKey, at now: UnixTime) {
        guard var state = runs[key], state.completion == nil, state.lastChangeAt < now else { return }
        state.lastChangeAt = now
        runs[key] = state
        completionDue[key] = inferredCompletionDue(state)
        changes.runs.insert(key)
    }
}
