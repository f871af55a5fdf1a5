extension BridgeEngine {
    /// Moves time to `now`: a run whose jobs all finished and that heard nothing for the grace
    /// period is taken as finished (its `completed` delivery was lost).
    public mutating func advance(to now: UnixTime) {
        for key in runs.keys.sorted() {
            guard let state = runs[key], state.completion == nil, let due = inferredCompletionDue(state), now >= due
            else { continue }
            runs[key]?.completion = RunCompletion(
                conclusion: Self.inferredConclusion(StepPlanner.plan(for: state)), recognizedAt: due, source: .inferred)
            changes.runs.insert(key)
            recordHistory(for: key)
            if let slug = slugs[key] { reassignCards(slug) }
        }
    }

    /// The earliest time after `now` at which something is due: a completion by grace, an end
    /// frame, a throttled update, the end of an end frame's display, a heartbeat. Nil when nothing is.
    public mutating func nextWakeup(after now: UnixTime) -> UnixTime? {
        var times: [UnixTime] = runs.values.compactMap { state in
            state.completion == nil ? inferredCompletionDue(state) : nil
        }
        if let blocked = gate.blockedUntil(at: now) { times.append(blocked) }
        for (slug, session) in sessions {
            if let owner = session.owner, let completion = runs[owner]?.completion {
                times.append(completion.recognizedAt + settings.endDelay)
            }
            if case .wait(let until) = decide(slug: slug, at: now) { times.append(until) }
        }
        return times.filter { $0 > now }.min()
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
