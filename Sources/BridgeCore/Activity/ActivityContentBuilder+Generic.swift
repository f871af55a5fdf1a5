/// The generic template (`activity.template: generic`): the whole run as one bar. Everything
/// around the content (lifecycle, ownership, economy, buttons) is the steps template's.
extension ActivityContentBuilder {
    /// The run's generic-template content: `progress` over the whole run, `state` the current job
    /// group (the same words as a steps card), `subtitle` the repository and workflow, and, when
    /// history estimates every step still ahead, a window over the rest of the run (sent as
    /// `live_progress`, `duration` and `remaining_time` by the reconciler, which clears them on
    /// the finishing update).
    func generic(
        for run: RunState, plan: StepPlan, end: EndAppearance?, actions: ActionSettings?, offers: Set<ActionKind>
    ) -> DesiredActivity {
        let total = plan.totalSteps
        let current = end != nil ? total : plan.currentStep
        var content: [String: JSONValue] = [
            "template": "generic",
            "icon": .string(String(settings.icon.prefix(128))),
            "subtitle": .string(Self.clip(subtitle(for: run), to: Self.textLimit)),
        ]
        let note = run.currentActionNote
        content.merge(links(for: run, end: end, actions: actions, offers: offers, note: note)) { $1 }
        content["compact_label"] = Self.compactLabel(current: current, total: total)
        if let end {
            content.merge(Self.endFields(end, note: note)) { $1 }
            return DesiredActivity(run: run.key, content: content, window: nil, isFinal: true, step: current)
        }
        content["progress"] = .number(Self.rounded(Self.wholeRunProgress(plan)))
        content["state"] = .string(Self.clip(note?.text ?? stateText(plan: plan, run: run), to: Self.textLimit))
        // A failed job turns the bar red at once, as the steps card turns its segment red.
        content["accent_color"] = .string(plan.firstFailedGroup == nil ? Self.liveAccent : StepPalette.failed)
        return DesiredActivity(
            run: run.key, content: content, window: Self.wholeRunWindow(plan), isFinal: false,
            changedAt: run.lastChangeAt, step: current)
    }

    /// The share of the run done: by expected time when history knows every step (finished steps
    /// whole, the current one by its finished jobs), else the share of jobs finished.
    static func wholeRunProgress(_ plan: StepPlan) -> Double {
        let estimates = plan.groups.map(\.estimate)
        guard !plan.groups.isEmpty, estimates.allSatisfy({ $0 != nil }) else { return plan.liveJobFraction }
        let weights = estimates.map { max(1, $0 ?? 1) }
        let sum = weights.reduce(0, +)
        var done = 0.0
        for (group, weight) in zip(plan.groups, weights) {
            if group.isFinished {
                done += weight
            } else if group.totalJobCount > 0 {
                done += weight * Double(group.finishedJobCount) / Double(group.totalJobCount)
            }
        }
        return done / sum
    }

    /// The window over the rest of the run: from the current step's start, its estimate plus
    /// every later step's (a step not started yet counts from when the window is sent, as on the
    /// steps card). Nil when a step ahead has no estimate: an ETA that leaves one out would
    /// promise too early.
    static func wholeRunWindow(_ plan: StepPlan) -> LiveWindow? {
        guard let group = plan.currentGroup, let estimate = group.estimate else { return nil }
        let later = plan.groups.dropFirst(plan.currentStep)
        guard later.allSatisfy({ $0.estimate != nil }) else { return nil }
        let rest = later.compactMap(\.estimate).reduce(0, +)
        return LiveWindow(step: plan.currentStep, estimate: estimate + rest, startedAt: group.startedAt)
    }
}
