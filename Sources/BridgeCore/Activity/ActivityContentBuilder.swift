/// Turns a run's step plan into steps-template content: the pure heart of what phones show.
///
/// Everything it produces is within the contract: arrays exactly `total_steps` long, rows 1–10,
/// labels ≤ 32 runes, strings within their limits counted as PushWard counts them (`CardText`).
public struct ActivityContentBuilder: Sendable {
    public static let labelLimit = 32
    static let textLimit = 256
    /// A tap action's `title`.
    static let titleLimit = 64
    static let liveAccent = "blue"

    public var settings: ActivitySettings

    public init(settings: ActivitySettings) {
        self.settings = settings
    }

    /// The run's content while it runs (or, with `end`, its end frame).
    ///
    /// - Parameters:
    ///   - end: the end frame's appearance; nil for a live frame.
    ///   - actions: the `actions` section, when buttons may act on GitHub; `offers` are the
    ///     buttons its rules give this run.
    public func desired(
        for run: RunState, plan: StepPlan, end: EndAppearance?, actions: ActionSettings? = nil,
        offers: Set<ActionKind> = []
    ) -> DesiredActivity {
        if settings.template == .generic {
            return generic(for: run, plan: plan, end: end, actions: actions, offers: offers)
        }
        let total = plan.totalSteps
        let weights = Self.weights(for: plan)
        let current = end != nil ? total : plan.currentStep
        // A run no job has described yet is one step standing for the whole run, named after it.
        let labels = plan.groups.isEmpty ? [Self.runStepName(run)] : plan.groups.map(\.name)
        var content: [String: JSONValue] = [
            "template": "steps",
            "icon": .string(String(settings.icon.prefix(128))),
            "subtitle": .string(Self.clip(subtitle(for: run), to: Self.textLimit)),
            "current_step": .number(Double(current)),
            "total_steps": .number(Double(total)),
            "step_rows": .array(Self.padded(plan.groups.map { .number(Double($0.rows)) }, to: total, with: 1)),
            "step_labels": .array(Self.padded(labels.map { .string(Self.label($0)) }, to: total, with: "")),
        ]
        let note = run.currentActionNote
        content.merge(links(for: run, end: end, actions: actions, offers: offers, note: note)) { $1 }
        if let weights {
            content["step_weights"] = .array(weights.map { .number($0) })
        }
        if settings.stepColors {
            let colors =
                plan.groups.isEmpty
                ? [Self.runStepColor(run, end: end)]
                : plan.groups.map { group in
                    group.hasFailure ? StepPalette.failed : StepPalette.color(forStepNamed: group.name)
                }
            content["step_colors"] = .array(Self.padded(colors.map { .string($0) }, to: total, with: ""))
        }
        content["compact_label"] = Self.compactLabel(current: current, total: total)

        if let end {
            content.merge(Self.endFields(end, note: note)) { $1 }
            return DesiredActivity(run: run.key, content: content, window: nil, isFinal: true)
        }
        content["progress"] = .number(Self.rounded(progress(plan: plan, weighted: weights != nil)))
        content["state"] = .string(Self.clip(note?.text ?? stateText(plan: plan, run: run), to: Self.textLimit))
        content["accent_color"] = .string(Self.liveAccent)
        let window = plan.currentGroup.flatMap { group in
            group.estimate.map { LiveWindow(step: current, estimate: $0, startedAt: group.startedAt) }
        }
        return DesiredActivity(
            run: run.key, content: content, window: window, isFinal: false, changedAt: run.lastChangeAt)
    }

    /// `current/total` for the compact view when it fits PushWard's 4 characters; nil (left off) when not.
    static func compactLabel(current: Int, total: Int) -> JSONValue? {
        let counter = "\(current)/\(total)"
        return counter.count <= 4 ? .string(counter) : nil
    }

    /// The end frame's fields, the same on both templates: full, the conclusion's words (or what
    /// became of a re-run asked from the phone, or of a refused press) and colour.
    static func endFields(_ end: EndAppearance, note: ActionNote?) -> [String: JSONValue] {
        let shown = note.flatMap { $0.kind == .rerun || $0.failed ? $0.text : nil } ?? end.state
        return [
            "progress": 1, "state": .string(clip(shown, to: textLimit)), "accent_color": .string(end.accentColor),
        ]
    }

    /// The card's links and buttons, the same on both templates: the run (`url`, `url_action`), the
    /// commit or pull request (`secondary_url`), and in the secondary button the action the
    /// `actions` rules offer, if any.
    func links(
        for run: RunState, end: EndAppearance?, actions: ActionSettings?, offers: Set<ActionKind>, note: ActionNote?
    ) -> [String: JSONValue] {
        let isEnd = end != nil
        var content: [String: JSONValue] = [:]
        // A link the payload made unacceptable to PushWard is left off (see `LinkURL`). A failed
        // run's end frame opens the failing job (`EndAppearance.link`), where the error is.
        let runURL = end?.link ?? run.runURL
        if LinkURL.isAcceptable(runURL) {
            content["url"] = .string(runURL)
            let title = end?.link == nil ? runTitle(for: run) : "Failed job"
            content["url_action"] = [
                "url": .string(runURL), "title": .string(Self.clip(title, to: Self.titleLimit)),
            ]
        }
        if let secondary = run.secondaryURL, LinkURL.isAcceptable(secondary.url) {
            content["secondary_url"] = .string(secondary.url)
            content["secondary_url_action"] = [
                "url": .string(secondary.url), "title": .string(Self.clip(secondary.title, to: Self.titleLimit)),
            ]
        }
        if let actions, let kind = Self.button(for: run, isEnd: isEnd, offers: offers, note: note) {
            // The secondary button acts; the legacy `secondary_url` keeps the link for older apps.
            content["secondary_url_action"] = actions.cardButton(kind)
        }
        return content
    }

    /// The button a card offers: Cancel while the run goes, "Re-run failed jobs" on a failed
    /// run's end frame; none while the card says what became of a press (a second press would
    /// meet the same answer).
    static func button(for run: RunState, isEnd: Bool, offers: Set<ActionKind>, note: ActionNote?) -> ActionKind? {
        guard note == nil else { return nil }
        if !isEnd {
            return run.completion == nil && offers.contains(.cancel) ? .cancel : nil
        }
        guard let conclusion = run.completion?.conclusion, AlertReason.failedConclusions.contains(conclusion) else {
            return nil
        }
        return offers.contains(.rerun) ? .rerun : nil
    }

    /// `<repo> / <workflow>`, which attempt a re-run is, and "from owner/name" for a fork's run:
    /// its workflow name may be the fork author's, so the card says whose code runs.
    func subtitle(for run: RunState) -> String {
        var text = run.repository.name + " / " + (run.workflowName ?? "workflow")
        if let from = run.origin.fromText { text += " · " + from }
        if run.key.attempt > 1 { text += " · attempt \(run.key.attempt)" }
        return text
    }

    func runTitle(for run: RunState) -> String {
        run.run?.runNumber.map { "Run #\($0)" } ?? "Run"
    }

    /// Without weights, the share of the run's jobs that finished. With weights (the segmented
    /// and weighted layouts) the template reads `progress` as the fill of the current step: the
    /// share of its parallel jobs that finished.
    func progress(plan: StepPlan, weighted: Bool) -> Double {
        guard weighted else { return plan.liveJobFraction }
        guard let group = plan.currentGroup, group.totalJobCount > 0 else { return plan.currentStep == 0 ? 0 : 1 }
        return Double(group.finishedJobCount) / Double(group.totalJobCount)
    }

    /// What the card's headline says while the run goes. Before a job starts it is the run's own
    /// status, when a `workflow_run` delivery gave one: `In progress` once GitHub (or Gitea) says
    /// so, rather than `Queued` for a run known only from those deliveries. It does not go back
    /// to `Queued` when a queued job then arrives: the run is in progress all the same. A job
    /// queued past `runner_wait` says it waits for a runner instead, with the minutes of the
    /// moment that was noticed (`RunnerWait`), so the text changes once and not every minute.
    func stateText(plan: StepPlan, run: RunState? = nil) -> String {
        if let run, let wait = RunnerWaitBook.shownWait(run) { return wait.cardText(limit: Self.textLimit) }
        guard let group = plan.currentGroup else {
            if let environment = plan.groups.lazy.compactMap(\.waitingEnvironment).first {
                return Self.waitingText(environment)
            }
            switch run?.run?.status {
            case .inProgress?, .completed?: return "In progress"
            case .waiting?: return Self.waitingText("")
            default: return "Queued"
            }
        }
        if let environment = group.waitingEnvironment { return Self.waitingText(environment) }
        let name = Self.capitalized(group.name)
        guard group.totalJobCount > 1 else { return name }
        return "\(name) \(group.finishedJobCount)/\(group.totalJobCount)"
    }

    /// The label of the one step of a run no job has described yet: the workflow's name.
    static func runStepName(_ run: RunState) -> String {
        run.workflowName ?? "Run"
    }

    /// The tint of that step: by its name's kind as any step's, else the live blue; on the end
    /// frame the conclusion's colour, since the step is the whole run.
    static func runStepColor(_ run: RunState, end: EndAppearance?) -> String {
        if let end { return end.accentColor }
        let kind = StepPalette.color(forStepNamed: runStepName(run))
        return kind.isEmpty ? liveAccent : kind
    }

    static func waitingText(_ environment: String) -> String {
        environment.isEmpty ? "Waiting for approval" : "Waiting for approval: \(environment)"
    }

    /// Each step's width: its expected seconds (floor 1), the mean of the others where it has no
    /// history. Nil when no step has history: then the card keeps the plain equal-width matrix.
    static func weights(for plan: StepPlan) -> [Double]? {
        let known = plan.groups.compactMap(\.estimate)
        guard !known.isEmpty else { return nil }
        let mean = known.reduce(0, +) / Double(known.count)
        let weights = plan.groups.map { max(1, ($0.estimate ?? mean).rounded()) }
        return padded(weights, to: plan.totalSteps, with: max(1, mean.rounded()))
    }

    /// A label within the contract's 32 runes, cut with `…` (`CardText`).
    static func label(_ name: String) -> String { clip(name, to: labelLimit) }

    /// Every text of a card: made plain and cut to `limit` Unicode scalars (`CardText.fitted`).
    static func clip(_ text: String, to limit: Int) -> String {
        CardText.fitted(text, to: limit)
    }

    static func capitalized(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst()
    }

    /// Four decimals are finer than any bar on a phone, and keep golden files readable.
    static func rounded(_ value: Double) -> Double {
        (min(1, max(0, value)) * 10_000).rounded() / 10_000
    }

    /// A run with no known step yet still sends arrays of length `total_steps` (1).
    static func padded<T>(_ values: [T], to count: Int, with filler: T) -> [T] {
        values.count >= count
            ? Array(values.prefix(count)) : values + Array(repeating: filler, count: count - values.count)
    }
}
