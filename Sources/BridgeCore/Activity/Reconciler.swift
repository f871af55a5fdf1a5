/// The pure reconciler: from what PushWard acknowledged and what the run wants shown, the next
/// request, if any. It never reads a clock and never sends anything itself.
///
/// Its promises: the minimal merge-patch (explicit `null` to clear), every step array whenever
/// `total_steps` changes, no request when nothing visible changed, at most one PATCH per
/// `min_update_interval` except end frames, and a live window only on the update that moves the step.
public enum Reconciler {
    /// Every content field the bridge ever sends or must clear: a run's first frame sets or nulls
    /// each, so nothing a previous run (or another tool) left on the slug carries over (a frame
    /// that sends `duration` leaves out `start_date` and `end_date`, which the duration sets).
    public static let ownedFields: [String] = [
        "template", "progress", "state", "icon", "subtitle", "accent_color", "background_color", "text_color",
        "current_step", "total_steps", "step_rows", "step_labels", "step_weights", "step_colors", "url",
        "secondary_url", "url_action", "secondary_url_action", "tap_action", "compact_label", "image_url",
        "image_shape", "image_thumbhash", "live_progress", "start_date", "end_date",
    ]
    /// The generic template's fields besides those: a generic first frame also nulls the steps
    /// fields, so a slug that drew steps before shows one clean bar.
    public static let genericFields: [String] = ["remaining_time"]
    /// Arrays whose length must equal `total_steps`.
    public static let stepArrays = ["step_rows", "step_labels", "step_weights", "step_colors"]
    /// The live window lives outside the desired content; see `LiveWindow`.
    static let windowFields: Set<String> = ["live_progress", "start_date", "end_date", "duration", "remaining_time"]

    public static func decide(
        session: ActivitySession, desired: DesiredActivity, settings: ActivitySettings, now: UnixTime
    ) -> ReconcileDecision {
        if session.phase != .ended, let retryAt = session.retryAt, now < retryAt { return .wait(until: retryAt) }
        let decision = nextRequest(session: session, desired: desired, settings: settings, now: now)
        // A body PushWard refused is never sent again: only a different desired state goes out.
        if case .send(let planned) = decision, let rejected = session.rejectedBody, planned.request.body == rejected {
            return .idle
        }
        return decision
    }

    static func nextRequest(
        session: ActivitySession, desired: DesiredActivity, settings: ActivitySettings, now: UnixTime
    ) -> ReconcileDecision {
        let slug = session.identity.slug
        switch session.phase {
        case .ended:
            // Deliveries that arrive after the end (GitHub does not order them) still change the
            // run: the card left on the Lock Screen gets one correction so it tells the truth.
            guard desired.isFinal, let acknowledged = session.acknowledged, session.owner == desired.run else {
                return .idle
            }
            // Only while the ended card is on the Lock Screen (`ended_ttl`, sent as
            // `dismissal_ttl`): after that nobody would see the correction it pays for.
            if let endedAt = session.endedAt, now > endedAt + Double(settings.endedTTL) { return .idle }
            let content = diff(
                acknowledged: acknowledged.content, shownStep: session.shownStep, desired: desired, now: now)
            guard !content.isEmpty else { return .idle }
            if let wait = throttle(session, settings, now) { return wait }
            if let hold = capHold(session, settings, now, forEnd: false) { return hold }
            return patch(slug, state: nil, content: content, kind: .correction, desired: desired)
        case .needsCreate:
            if let hold = capHold(session, settings, now, forEnd: false) { return hold }
            var body: [String: JSONValue] = [
                "slug": .string(slug), "name": .string(session.identity.name),
                "priority": .number(Double(settings.priority)),
            ]
            body.merge(lifetimes(session, settings)) { $1 }
            if let target = session.identity.target { body["target"] = target.json }
            return .send(
                PlannedRequest(
                    request: PushWardRequest(method: .post, slug: slug, body: .object(body)), kind: .create,
                    run: desired.run))
        case .needsFirstFrame:
            if !desired.isFinal, let wait = throttle(session, settings, now) { return wait }
            if let hold = capHold(session, settings, now, forEnd: desired.isFinal) { return hold }
            // A run first seen already over goes straight to its end frame, as a full frame.
            let kind: PlannedRequest.Kind = desired.isFinal ? .finalFrame : .firstFrame
            let decision = patch(
                slug, state: "ongoing", content: fullFrame(desired, now: now), kind: kind, desired: desired)
            // On a reused activity (no create) the first frame sets what the create would have.
            guard session.reused == true, case .send(var planned) = decision,
                var body = planned.request.body.objectValue
            else { return decision }
            body["priority"] = .number(Double(settings.priority))
            body.merge(lifetimes(session, settings)) { $1 }
            planned.request.body = .object(body)
            return .send(planned)
        case .live where session.needsFullFrame:
            if !desired.isFinal, let wait = throttle(session, settings, now) { return wait }
            if let hold = capHold(session, settings, now, forEnd: desired.isFinal) { return hold }
            let kind: PlannedRequest.Kind = desired.isFinal ? .finalFrame : .update
            return patch(slug, state: "ongoing", content: fullFrame(desired, now: now), kind: kind, desired: desired)
        case .live:
            let acknowledged = session.acknowledged
            let content = diff(
                acknowledged: acknowledged?.content ?? [:], shownStep: session.shownStep, desired: desired, now: now)
            let stateChange = acknowledged?.state == "ongoing" ? nil : "ongoing"
            if desired.isFinal {
                if let hold = capHold(session, settings, now, forEnd: true) { return hold }
                return patch(
                    slug, state: stateChange, content: finishing(content, desired), kind: .finalFrame, desired: desired)
            }
            let heartbeatAt = (session.lastPatchAt ?? now) + Double(staleTTL(session, settings)) / 2
            if content.isEmpty && stateChange == nil {
                guard now >= heartbeatAt else { return .wait(until: heartbeatAt) }
                if let hold = capHold(session, settings, now, forEnd: false) { return hold }
                return patch(slug, state: "ongoing", content: [:], kind: .heartbeat, desired: desired)
            }
            if stateChange == nil,
                let hold = pacing(
                    session, acknowledged: acknowledged?.content ?? [:], desired: desired, settings: settings,
                    heartbeatAt: heartbeatAt, now: now)
            {
                return hold
            }
            if let wait = throttle(session, settings, now) { return wait }
            if let hold = capHold(session, settings, now, forEnd: false) { return hold }
            return patch(slug, state: stateChange, content: content, kind: .update, desired: desired)
        case .finalShown:
            let endAt = (session.finalShownAt ?? now) + settings.endDisplayTime
            guard now >= endAt else { return .wait(until: endAt) }
            if let hold = capHold(session, settings, now, forEnd: true) { return hold }
            return patch(slug, state: "ended", content: [:], kind: .end, desired: desired)
        }
    }

    /// The TTLs a card is given, on its create or the first frame of a reused activity: PushWard
    /// keeps the ended activity (`ended_ttl` its longest, for the next run to reuse), the Lock
    /// Screen keeps the ended card `dismissal_ttl` (the configured `ended_ttl`), and an activity
    /// nobody updated ends after `stale_ttl`.
    static func lifetimes(_ session: ActivitySession, _ settings: ActivitySettings) -> [String: JSONValue] {
        [
            "ended_ttl": .number(Double(ActivitySettings.retainedEndedTTL)),
            "dismissal_ttl": .number(Double(settings.dismissalTTL)),
            "stale_ttl": .number(Double(staleTTL(session, settings))),
        ]
    }

    /// Every owned field set or nulled: what a first frame (or the frame after a refusal) sends.
    ///
    /// With a window it sends `live_progress` and `duration` and leaves `start_date`/`end_date`
    /// out: the duration sets both, and PushWard lets a present `end_date` win over `duration`,
    /// a `null` one included, so nulling them would clear the window the same body asks for
    /// (`422 live_progress requires end_date or duration`).
    static func fullFrame(_ desired: DesiredActivity, now: UnixTime) -> [String: JSONValue] {
        let window = windowPatch(desired: desired, acknowledged: nil, shownStep: nil, now: now)
        let setByDuration = window["duration"] == nil ? [] : durationSets
        let owned = (desired.isGeneric ? ownedFields + genericFields : ownedFields).filter {
            !setByDuration.contains($0)
        }
        var content = Dictionary(uniqueKeysWithValues: owned.map { ($0, JSONValue.null) })
        content.merge(desired.content) { _, wanted in wanted }
        content.merge(window) { _, window in window }
        return content
    }

    /// The fields PushWard sets from `duration` (`start_date = now`, `end_date = now + duration`):
    /// a content that carries `duration` never carries them, as a value or as `null`.
    static let durationSets: Set<String> = ["start_date", "end_date"]

    /// The end frame's content: on the generic template it always clears the countdown, as the
    /// template asks (a finished card must not keep counting toward an ETA), even when the bridge
    /// believes none is showing.
    static func finishing(_ content: [String: JSONValue], _ desired: DesiredActivity) -> [String: JSONValue] {
        guard desired.isGeneric else { return content }
        return content.merging(["end_date": .null, "live_progress": .null, "remaining_time": .null]) { sent, _ in sent }
    }

    /// The session after PushWard acknowledged `planned` (a 2xx).
    public static func acknowledge(
        _ planned: PlannedRequest, session: ActivitySession, settings: ActivitySettings, at now: UnixTime
    ) -> ActivitySession {
        // A deletion spends no update and shows nothing (`BridgeEngine.acknowledgeDeletion`).
        guard planned.kind != .delete else { return session }
        var session = session
        session.retryAt = nil
        session.failures = 0
        session.rejectedBody = nil
        if planned.request.method == .patch {
            session.needsFullFrame = false
            session.reused = nil
        }
        if let step = planned.step { session.acknowledgedStep = step }
        // Every acknowledged request, a POST like a PATCH, is one of PushWard's updates.
        session.recentUpdates = session.updates(inHourBefore: now) + [now]
        session.totalUpdates = (session.totalUpdates ?? 0) + 1
        switch planned.kind {
        case .create:
            // A re-POST keeps whatever content the slug had: unknown until the first frame.
            session.acknowledged = nil
            session.phase = .needsFirstFrame
            session.waitsForRoom = nil
            session.serverIdentity = session.identity
            return session
        case .delete:
            return session
        case .firstFrame, .update, .heartbeat, .finalFrame, .end, .correction:
            // With nothing acknowledged since the POST, the request was a full frame, which sets
            // or clears every field: applying it to a blank activity gives what the server holds.
            let base =
                session.acknowledged
                ?? StoredActivity(
                    state: "ended", content: [:], name: session.identity.name, priority: settings.priority,
                    endedTTL: ActivitySettings.retainedEndedTTL, staleTTL: settings.staleTTL)
            session.acknowledged = PushWardActivityModel.applyPatch(planned.request.body, to: base, at: now)
        }
        if planned.kind != .end { session.lastPatchAt = now }
        session.pendingSince = nil
        switch planned.kind {
        case .firstFrame, .update, .heartbeat:
            session.phase = .live
        case .finalFrame:
            session.phase = .finalShown
            session.finalShownAt = now
        case .end:
            session.phase = .ended
            session.endedAt = now
        case .create, .correction, .delete:
            break
        }
        return session
    }

    /// The content fields that differ, with `null` for fields to clear and every step array when
    /// `total_steps` changes; the window fields follow the step (see `windowPatch`).
    static func diff(
        acknowledged: [String: JSONValue], shownStep: Int?, desired: DesiredActivity, now: UnixTime
    ) -> [String: JSONValue] {
        var patch: [String: JSONValue] = [:]
        for (key, wanted) in desired.content where acknowledged[key] != wanted {
            patch[key] = acknowledged[key].flatMap { MergePatch.diff(from: $0, to: wanted) } ?? wanted
        }
        for key in acknowledged.keys where desired.content[key] == nil && !windowFields.contains(key) {
            patch[key] = .null
        }
        if patch["total_steps"] != nil {
            for key in stepArrays { if let array = desired.content[key] { patch[key] = array } }
        }
        patch.merge(windowPatch(desired: desired, acknowledged: acknowledged, shownStep: shownStep, now: now)) {
            _, window in window
        }
        return patch
    }

    /// The window fields for a request: a fresh `duration` when the step changes to one with an
    /// estimate, nulls when it changes to one without (or the run is over) and a window is showing,
    /// nothing at all when the step did not change. `shownStep` is the step PushWard shows
    /// (`ActivitySession.shownStep`); nil with no acknowledged frame.
    ///
    /// On the generic template the window is the whole run's, and `remaining_time` rides with it.
    static func windowPatch(
        desired: DesiredActivity, acknowledged: [String: JSONValue]?, shownStep: Int?, now: UnixTime
    ) -> [String: JSONValue] {
        let stepChanged = acknowledged == nil || shownStep != desired.currentStep
        guard stepChanged || desired.isFinal else { return [:] }
        if !desired.isFinal, let window = desired.window, window.step == desired.currentStep,
            let remaining = window.remaining(at: now)
        {
            var fields: [String: JSONValue] = ["live_progress": true, "duration": .number(Double(remaining))]
            if desired.isGeneric { fields["remaining_time"] = .number(Double(remaining)) }
            return fields
        }
        let fields = ["live_progress", "start_date", "end_date"] + (desired.isGeneric ? ["remaining_time"] : [])
        let showing = fields.filter { key in
            acknowledged.map { ($0[key].map { !$0.isNull }) ?? false } ?? true
        }
        return Dictionary(uniqueKeysWithValues: showing.map { ($0, JSONValue.null) })
    }

    /// Whether a live change waits, by the run's level (see `Fidelity`): a first failure never
    /// does; a step change waits the settle window (or, below `steps`, rides along); any other
    /// change waits `coalesce` (or, below `full`, rides along). Nothing waits past the heartbeat,
    /// which then carries what was held. Nil: send now.
    static func pacing(
        _ session: ActivitySession, acknowledged: [String: JSONValue], desired: DesiredActivity,
        settings: ActivitySettings, heartbeatAt: UnixTime, now: UnixTime
    ) -> ReconcileDecision? {
        if DesiredActivity.showsFailure(desired.content) && !DesiredActivity.showsFailure(acknowledged) { return nil }
        let level = session.fidelity ?? settings.fidelity
        let since = session.pendingSince ?? now
        let stepChange =
            session.shownStep != desired.currentStep || acknowledged["total_steps"] != desired.content["total_steps"]
        let (until, reason): (UnixTime, HoldReason)
        switch (stepChange, stepChange ? level.pushesStepChanges : level.pushesMinorChanges) {
        case (_, false): (until, reason) = (heartbeatAt, .belowLevel)
        case (true, true): (until, reason) = (since + settings.settle, .settling)
        case (false, true):
            // Quiet for `coalesce` since the run last changed (but held at most `maxHold`), and
            // at least `maxHold` after the card last moved: the shards of a matrix finishing a
            // few seconds apart become one update, and a step's counts move at most once a minute.
            let quietAt = max(since, desired.changedAt ?? since) + settings.coalesce
            let spacedAt = (session.lastPatchAt ?? since) + settings.maxHold
            (until, reason) = (max(min(quietAt, since + settings.maxHold), spacedAt), .coalescing)
        }
        let due = min(until, heartbeatAt)
        return now < due ? .hold(until: due, reason: reason) : nil
    }

    /// The `stale_ttl` a card is created with, after which PushWard ends an activity nobody
    /// updated; the heartbeat goes at half of it. At `milestones` a run sends nothing between its
    /// first frame and its end, so the card gets at least 4 hours (a heartbeat every 2) instead
    /// of one every 15 minutes, which would be most of what such a long run costs.
    static func staleTTL(_ session: ActivitySession, _ settings: ActivitySettings) -> Int {
        (session.fidelity ?? settings.fidelity) == .milestones ? max(settings.staleTTL, 4 * 3_600) : settings.staleTTL
    }

    /// The hourly cap: a request waits while the card has used its requests of the last hour,
    /// until the oldest of them leaves the window. The last `reservedForEnd` are only for the end
    /// frame and the end (`forEnd`), so a run that spent its hour still ends on time.
    static func capHold(_ session: ActivitySession, _ settings: ActivitySettings, _ now: UnixTime, forEnd: Bool)
        -> ReconcileDecision?
    {
        let recent = session.updates(inHourBefore: now)
        let allowed = max(1, settings.maxUpdatesPerHour - (forEnd ? 0 : ActivitySettings.reservedForEnd))
        guard recent.count >= allowed else { return nil }
        return .hold(until: recent[recent.count - allowed] + 3600, reason: .hourlyCap)
    }

    static func throttle(_ session: ActivitySession, _ settings: ActivitySettings, _ now: UnixTime)
        -> ReconcileDecision?
    {
        guard let last = session.lastPatchAt, now < last + settings.minUpdateInterval else { return nil }
        return .wait(until: last + settings.minUpdateInterval)
    }

    static func patch(
        _ slug: String, state: String?, content: [String: JSONValue], kind: PlannedRequest.Kind,
        desired: DesiredActivity
    ) -> ReconcileDecision {
        var body: [String: JSONValue] = [:]
        if let state { body["state"] = .string(state) }
        if !content.isEmpty { body["content"] = .object(content) }
        guard !body.isEmpty else { return .idle }
        return .send(
            PlannedRequest(
                request: PushWardRequest(method: .patch, slug: slug, body: .object(body)), kind: kind,
                run: desired.run, step: desired.content["current_step"] == nil ? desired.step : nil))
    }
}
