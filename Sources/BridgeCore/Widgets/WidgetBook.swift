/// Home-screen widgets (`widgets`), the engine's widget feature: each follows the newest run its
/// globs choose and asks the `WidgetReconciler` for the few updates worth a widget's scarce
/// budget. It reads a run only when the engine hands it one; nothing else reads or moves its state.
public struct WidgetBook: Sendable {
    /// Each configured widget's state, by slug.
    public private(set) var sessions: [String: WidgetSession] = [:]
    /// Where the month's widget updates stand, and a pause after PushWard said they are spent.
    public private(set) var budget = WidgetBudget()

    public init() {}

    /// Points every widget of `configured` that follows `state`'s run at it when it is the newest
    /// they follow, and rebuilds what it wants shown. `supersededBy` names a newer run of the same
    /// workflow and branch (asked only when a widget shows the run's end).
    public mutating func follow(
        _ state: RunState, configured: [WidgetSettings], icon: String, supersededBy: () -> Int?,
        changes: inout EngineChanges
    ) {
        let key = state.key
        for settings in configured where settings.follows(state) {
            var session = sessions[settings.slug] ?? WidgetSession(slug: settings.slug)
            let startedAt = state.attemptStartedAt
            if let current = session.run, current != key, let shownStart = session.runStartedAt,
                (shownStart, current.runID, current.attempt) > (startedAt, key.runID, key.attempt)
            {
                continue
            }
            session.run = key
            session.runStartedAt = startedAt
            let plan = StepPlanner.plan(for: state)
            let end = state.completion.map { completion in
                EndAppearance.forConclusion(
                    completion.conclusion,
                    failedStep: plan.firstFailedGroup.map { ActivityContentBuilder.label($0.name) },
                    supersededBy: supersededBy())
            }
            session.desired = WidgetContent.content(for: state, plan: plan, end: end, icon: icon)
            session.desiredFinal = end != nil
            if sessions[settings.slug] != session {
                sessions[settings.slug] = session
                changes.widgets.insert(settings.slug)
            }
        }
    }

    /// The widget requests due at `now`, none for a widget whose request is still out. Widgets are
    /// upkeep to the pacer: one it has no room for is decided again on the next turn.
    public func dueRequests(
        at now: UnixTime, inFlight: Set<String>, configured: [WidgetSettings], dispatch: inout DispatchControl
    ) -> [PlannedWidgetRequest] {
        guard !configured.isEmpty, budget.allowsAny(at: now) else { return [] }
        let estimates = budget.allowsEstimates(at: now)
        var due: [PlannedWidgetRequest] = []
        for settings in configured where !inFlight.contains(settings.slug) {
            let session = sessions[settings.slug] ?? WidgetSession(slug: settings.slug)
            if case .send(let planned) = WidgetReconciler.decide(
                session, settings: settings, estimates: estimates, now: now)
            {
                guard dispatch.admitPaced(.upkeep, at: now) else { break }
                due.append(planned)
            }
        }
        return due
    }

    /// When a widget next wants deciding although nothing happens: a retry, or the end of a pause.
    public func nextWakeup(after now: UnixTime) -> UnixTime? {
        var times = sessions.values.compactMap(\.retryAt)
        if let paused = budget.pausedUntil { times.append(paused) }
        return times.filter { $0 > now }.min()
    }

    /// What became of a widget request: a 2xx moves the widget on; a 404 creates it again; a
    /// spent quota pauses widgets until the reset; a refusal is kept and not sent again; anything
    /// else retries with backoff. PushWard's per-minute limit holds every request, so a `429`
    /// without a spent quota goes to the dispatch gate. Returns what the daemon logs.
    public mutating func handle(
        _ answer: PushWardAnswer, for planned: PlannedWidgetRequest, at now: UnixTime,
        dispatch: inout DispatchControl, changes: inout EngineChanges
    ) -> WidgetAnswerEffect {
        let slug = planned.request.slug
        var session = sessions[slug] ?? WidgetSession(slug: slug)
        defer {
            sessions[slug] = session
            changes.widgets.insert(slug)
        }
        switch answer {
        case .success:
            session = WidgetReconciler.acknowledge(planned, session: session, at: now)
            budget.spend()
            return .acknowledged
        case .problem(let problem):
            session.lastProblem = problem.summary
            session.lastProblemAt = now
            switch problem.status {
            case 404:
                session.shown = nil
                return .recreating
            case 429 where problem.code == "quota.exceeded":
                let until = problem.resetAt ?? now + 3_600
                budget.pausedUntil = until
                if let limit = problem.quotaLimit { budget.limit = limit }
                if let used = problem.quotaUsed { budget.used = used }
                return .quotaExhausted(until: until)
            case 429:
                _ = dispatch.noteRateLimited(retryAfter: problem.retryAfter, at: now, changes: &changes)
                return Self.retry(&session, after: problem.retryAfter, at: now)
            case 500...:
                return Self.retry(&session, after: problem.retryAfter, at: now)
            case 401, 403:
                session.retryAt = now + 3_600
                return .refused(problem.summary)
            default:
                session.rejectedBody = planned.request.body
                return .rejected(problem.summary)
            }
        case .noAnswer(let reason):
            session.lastProblem = reason
            session.lastProblemAt = now
            return Self.retry(&session, after: nil, at: now)
        }
    }

    private static func retry(_ session: inout WidgetSession, after wait: Double?, at now: UnixTime)
        -> WidgetAnswerEffect
    {
        session.failures += 1
        let backoff = wait ?? min(3_600, 10 * Double(1 << min(session.failures - 1, 9)))
        session.retryAt = now + backoff
        return .willRetry(at: now + backoff)
    }

    /// Where the month's widget updates stand, from `GET /auth/me`.
    public mutating func noteUsage(used: Int?, limit: Int?) {
        budget.used = used
        budget.limit = limit
    }

    /// Puts back a widget read from storage.
    public mutating func restore(_ session: WidgetSession) {
        sessions[session.slug] = session
    }
}
