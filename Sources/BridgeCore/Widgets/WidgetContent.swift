/// A run as a PushWard `progress` widget (`progress-widget.txt`, `PUSHWARD-MORE.md` §5): pure,
/// from the run's state alone, so the same run always gives the same widget.
///
/// `value` the run's progress, `label` the workflow, `subtitle` the branch and state, `stat_rows`
/// jobs done and failed, duration and queue time (with units) and the repository, and while a run with an estimate
/// is in flight `start_date`/`end_date` (RFC 3339) so the bar advances on its own; `value` is
/// always sent too, for app builds before 1.6. Every name in it comes from whoever can push a
/// branch: made plain (no controls, no bidi overrides) and cut to PushWard's limits.
public enum WidgetContent {
    public static let textLimit = 256
    public static let statValueLimit = 32

    /// The widget's content for `state`; `end` is the finished run's appearance (nil while it goes).
    public static func content(
        for state: RunState, plan: StepPlan, end: EndAppearance?, icon: String
    ) -> [String: JSONValue] {
        let workflow = state.workflowName ?? "workflow"
        let words = end?.state ?? ActivityContentBuilder(settings: ActivitySettings()).stateText(plan: plan)
        var subtitle = state.headBranch.map { "\($0) · " } ?? ""
        if let from = state.origin.fromText { subtitle += from + " · " }
        subtitle += words
        if state.key.attempt > 1 { subtitle += " · attempt \(state.key.attempt)" }
        var content: [String: JSONValue] = [
            "template": "progress",
            "value": .number(
                end != nil ? 1 : ActivityContentBuilder.rounded(ActivityContentBuilder.wholeRunProgress(plan))),
            "label": .string(text(workflow, textLimit)),
            "subtitle": .string(text(subtitle, textLimit)),
            "icon": .string(String(icon.prefix(128))),
            "accent_color": .string(
                end?.accentColor ?? (plan.firstFailedGroup == nil ? "blue" : StepPalette.failed)),
            "stat_rows": .array(statRows(for: state, plan: plan, finished: end != nil)),
        ]
        if LinkURL.isAcceptable(state.runURL) { content["tap_action"] = ["url": .string(state.runURL)] }
        if end == nil, let window = window(for: state, plan: plan) {
            content["start_date"] = .string(GitHubTimestamp.format(window.start))
            content["end_date"] = .string(GitHubTimestamp.format(window.end))
        }
        return content
    }

    /// The bar's window while the run goes: from when the run started to then plus history's
    /// estimate of every step. Nil when a step has no estimate or the run has not started.
    public static func window(for state: RunState, plan: StepPlan) -> (start: UnixTime, end: UnixTime)? {
        guard !plan.groups.isEmpty, plan.groups.allSatisfy({ $0.estimate != nil }) else { return nil }
        let started = plan.groups.compactMap(\.startedAt).min() ?? state.run?.runStartedAt ?? state.run?.createdAt
        // PushWard takes dates after 2000 and at most 366 days ahead: a start from a payload that
        // says otherwise, or an estimate past what any window trusts, gets no dates.
        guard let started, started > 946_684_800 else { return nil }
        let total = plan.groups.compactMap(\.estimate).reduce(0, +)
        guard total >= 1, total <= LiveWindow.maximumRemaining else { return nil }
        return (started, started + total.rounded())
    }

    /// The window's end a content carries (its `end_date`), as a time; nil without a window.
    public static func endDate(of content: [String: JSONValue]) -> UnixTime? {
        content["end_date"]?.stringValue.flatMap(GitHubTimestamp.parse)
    }

    /// Jobs done of all, failed when any did, how long the run took and how long its first job
    /// queued, and the repository (a widget may follow several).
    static func statRows(for state: RunState, plan: StepPlan, finished: Bool) -> [JSONValue] {
        let jobs = plan.groups.reduce(0) { $0 + $1.totalJobCount }
        let done = plan.groups.reduce(0) { $0 + $1.finishedJobCount }
        let failed = state.workflowJobs.filter(\.failed).count
        var rows: [JSONValue] = [["label": "Jobs", "value": .string("\(done)/\(max(jobs, done))")]]
        if failed > 0 { rows.append(["label": "Failed", "value": .string(String(failed))]) }
        let starts = state.workflowJobs.compactMap(\.startedAt)
        let ends = state.workflowJobs.compactMap(\.completedAt)
        if finished, let first = starts.min(), let last = ends.max(), last >= first {
            rows.append(amount("Duration", seconds: last - first))
        }
        let created = state.workflowJobs.compactMap(\.createdAt).min() ?? state.run?.createdAt
        if let created, let first = starts.min(), first >= created {
            rows.append(amount("Queued", seconds: first - created))
        }
        rows.append(["label": "Repository", "value": .string(text(state.key.repository, statValueLimit))])
        return rows
    }

    /// A duration in the unit a person reads it in: seconds under two minutes, then minutes, then hours.
    static func amount(_ label: String, seconds: Double) -> JSONValue {
        let (value, unit): (Int, String) =
            seconds < 120
            ? (Int(seconds.rounded()), "s")
            : seconds < 7_200
                ? (Int((seconds / 60).rounded()), "min")
                : (Int((seconds / 3_600).rounded()), "h")
        return ["label": .string(label), "value": .string(String(value)), "unit": .string(unit)]
    }

    static func text(_ value: String, _ limit: Int) -> String {
        CardText.fitted(value, to: limit)
    }
}
