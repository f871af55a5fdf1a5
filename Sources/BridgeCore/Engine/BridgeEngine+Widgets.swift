/// Home-screen widgets (`widgets`): each follows the newest run its globs choose and asks the
/// `WidgetReconciler` for the few updates worth a widget's scarce budget.
extension BridgeEngine {
    /// Points every widget that follows `key`'s run at it when it is the newest they follow, and
    /// rebuilds what it wants shown.
    mutating func followWidgets(_ key: RunKey) {
        guard !widgetSettings.isEmpty, let state = runs[key] else { return }
        for settings in widgetSettings where settings.follows(state) {
            var session = widgets[settings.slug] ?? WidgetSession(slug: settings.slug)
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
                    supersededBy: supersedingRunNumber(of: state))
            }
            session.desired = WidgetContent.content(for: state, plan: plan, end: end, icon: self.settings.icon)
            session.desiredFinal = end != nil
            if widgets[settings.slug] != session {
                widgets[settings.slug] = session
                changes.widgets.insert(settings.slug)
            }
        }
    }

    /// The widget requests due at `now`, none for a widget whose request is still out.
    public mutating func dueWidgetRequests(at now: UnixTime, inFlight: Set<String>) -> [PlannedWidgetRequest] {
        guard !widgetSettings.isEmpty, widgetBudget.allowsAny(at: now) else { return [] }
        let estimates = widgetBudget.allowsEstimates(at: now)
        var due: [PlannedWidgetRequest] = []
        for settings in widgetSettings where !inFlight.contains(settings.slug) {
            let session = widgets[settings.slug] ?? WidgetSession(slug: settings.slug)
            if case .send(let planned) = WidgetReconciler.decide(
                session, settings: settings, estimates: estimates, now: now)
            {
                // Widgets are upkeep to the pacer: decided again on the next turn it has room.
                guard admitPaced(.upkeep, at: now) else { break }
                due.append(planned)
            }
        }
        return due
    }

    /// When a widget next wants deciding although nothing happens: a retry, or the end of a pause.
    public func nextWidgetWakeup(after now: UnixTime) -> UnixTime? {
        var times = widgets.values.compactMap(\.retryAt)
        if let paused = widgetBudget.pausedUntil { times.append(paused) }
        return times.filter { $0 > now }.min()
    }

    /// What became of a widget request: a 2xx moves the widget on; a 404 creates it again; a
    /// spent quota pauses widgets until the reset; a refusal is kept and not sent again; anything
    /// else retries with backoff. Returns what the daemon logs.
    public mutating func handleWidget(_ answer: PushWardAnswer, for planned: PlannedWidgetRequest, at now: UnixTime)
        -> WidgetAnswerEffect
    {
        let slug = planned.request.slug
        var session = widgets[slug] ?? WidgetSession(slug: slug)
        defer {
            widgets[slug] = session
            changes.widgets.insert(slug)
        }
        switch answer {
        case .success:
            session = WidgetReconciler.acknowledge(planned, session: session, at: now)
            widgetBudget.spend()
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
                widgetBudget.pausedUntil = until
                if let limit = problem.quotaLimit { widgetBudget.limit = limit }
                if let used = problem.quotaUsed { widgetBudget.used = used }
                return .quotaExhausted(until: until)
            case 429:
                // PushWard's per-minute limit holds every request, not this widget alone.
                noteRateLimited(retryAfter: problem.retryAfter, at: now)
                return retry(&session, after: problem.retryAfter, at: now)
            case 500...:
                return retry(&session, after: problem.retryAfter, at: now)
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
            return retry(&session, after: nil, at: now)
        }
    }

    private func retry(_ session: inout WidgetSession, after wait: Double?, at now: UnixTime) -> WidgetAnswerEffect {
        session.failures += 1
        let backoff = wait ?? min(3_600, 10 * Double(1 << min(session.failures - 1, 9)))
        session.retryAt = now + backoff
        return .willRetry(at: now + backoff)
    }

    /// Puts back a widget read from storage.
    public mutating func restore(widget session: WidgetSession) {
        widgets[session.slug] = session
    }
}

/// What a widget answer meant, for the log.
public enum WidgetAnswerEffect: Sendable, Equatable {
    case acknowledged
    case recreating
    case quotaExhausted(until: UnixTime)
    case willRetry(at: UnixTime)
    case refused(String)
    case rejected(String)
}
