/// The pure reconciler of widgets: from what PushWard holds and what the followed run wants
/// shown, the next request, if any.
///
/// Widget updates are the scarcest thing the bridge spends (50 a month on the free plan, and
/// every PATCH counts, unchanged or not), so a widget moves three times a run at most: when a run
/// starts (with its window), when the estimate moves by more than `estimateThreshold`, and when
/// the run ends. A progress change alone is never sent: the dates advance the bar on the phone.
public enum WidgetReconciler {
    /// How far the window's end must move before it is worth an update: a minute, or a quarter of
    /// what is left of the run, whichever is more. A bar that is off by less is not noticed.
    public static func estimateThreshold(remaining: Double) -> Double { max(60, remaining / 4) }

    public enum Decision: Sendable, Equatable {
        case send(PlannedWidgetRequest)
        case wait(until: UnixTime)
        case idle
    }

    /// - Parameter estimates: false when the budget keeps only starts and ends.
    public static func decide(
        _ session: WidgetSession, settings: WidgetSettings, estimates: Bool, now: UnixTime
    ) -> Decision {
        if let retryAt = session.retryAt, now < retryAt { return .wait(until: retryAt) }
        let decision = next(session, settings: settings, estimates: estimates, now: now)
        if case .send(let planned) = decision, let rejected = session.rejectedBody, planned.request.body == rejected {
            return .idle
        }
        return decision
    }

    static func next(_ session: WidgetSession, settings: WidgetSettings, estimates: Bool, now: UnixTime) -> Decision {
        // Nothing is created before there is a run to show: a placeholder would cost an update.
        guard let desired = session.desired, let run = session.run else { return .idle }
        guard let shown = session.shown else {
            let body: [String: JSONValue] = [
                "slug": .string(settings.slug), "name": .string(WidgetContent.text(settings.name, 256)),
                "content": .object(desired), "stale_after": .number(Double(settings.staleAfter)),
            ]
            return .send(
                PlannedWidgetRequest(
                    request: PushWardRequest(
                        method: .post, slug: settings.slug, body: .object(body), resource: .widgets),
                    kind: .create, run: run, final: session.desiredFinal, content: desired))
        }
        let kind: PlannedWidgetRequest.Kind
        if shown.run != run {
            kind = session.desiredFinal ? .end : .start
        } else if session.desiredFinal {
            guard !shown.final else { return .idle }
            kind = .end
        } else if estimates,
            moved(from: WidgetContent.endDate(of: shown.content), to: WidgetContent.endDate(of: desired), now: now)
        {
            kind = .estimate
        } else {
            return .idle
        }
        // Nothing to change on the phone: no update is spent on it.
        guard var patch = MergePatch.diff(from: .object(shown.content), to: .object(desired))?.objectValue,
            !patch.isEmpty
        else {
            return .idle
        }
        // PushWard's schema makes `template` required in a widget PATCH too, and the sources
        // disagree whether it keeps the stored one: every patch names it.
        patch["template"] = desired["template"]
        return .send(
            PlannedWidgetRequest(
                request: PushWardRequest(
                    method: .patch, slug: settings.slug, body: ["content": .object(patch)], resource: .widgets),
                kind: kind, run: run, final: session.desiredFinal, content: desired))
    }

    /// Whether the window's end moved enough to be worth one of the month's widget updates; a
    /// window appearing or going counts.
    static func moved(from sent: UnixTime?, to wanted: UnixTime?, now: UnixTime) -> Bool {
        switch (sent, wanted) {
        case (nil, nil): return false
        case (nil, _), (_, nil): return true
        case (let sent?, let wanted?):
            return abs(wanted - sent) > estimateThreshold(remaining: max(0, wanted - now))
        }
    }

    /// The session after PushWard acknowledged `planned`.
    public static func acknowledge(_ planned: PlannedWidgetRequest, session: WidgetSession, at now: UnixTime)
        -> WidgetSession
    {
        var session = session
        session.retryAt = nil
        session.failures = 0
        session.rejectedBody = nil
        session.updatesSpent += 1
        session.shown = WidgetSession.Shown(run: planned.run, final: planned.final, content: planned.content)
        return session
    }
}

/// A widget request the reconciler wants sent, and what PushWard shows once it takes it.
public struct PlannedWidgetRequest: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// `POST /widgets`, an upsert carrying the first run it shows (or after a 404).
        case create
        /// A new run: its start, with the window.
        case start
        /// The window's end moved by more than the threshold.
        case estimate
        /// The run's result, which stays.
        case end
    }

    public var request: PushWardRequest
    public var kind: Kind
    public var run: RunKey?
    public var final: Bool
    /// The whole content PushWard holds once it applied the request.
    public var content: [String: JSONValue]
}
