/// The `POST /notifications` body of an alert, from the run's state.
///
/// Every name in it comes from whoever can push a branch or open a pull request, so each is made
/// plain before it is placed: control characters become spaces and bidirectional overrides are
/// dropped (a branch named with U+202E must not read backwards on a Lock Screen). Then every
/// field is cut to PushWard's limit, counted in Unicode scalars as its JSON Schema counts, at a
/// character boundary, with an ellipsis where something was cut.
public enum AlertContent {
    /// PushWard's limits (`PUSHWARD-MORE.md` §2).
    public static let titleLimit = 256
    public static let bodyLimit = 4_096
    public static let threadLimit = 128
    public static let collapseLimit = 64
    public static let urlLimit = 2_048

    /// Without `activity_slug`: the sender adds it when PushWard has the run's activity by then.
    ///
    /// - Parameter actions: the notification's buttons (`ActionSettings.notificationAction`).
    public static func body(
        for reason: AlertReason, state: RunState, level: AlertRule.Level, target: ActivityTarget? = nil,
        actions: [JSONValue] = []
    ) -> JSONValue {
        let repository = CardText.plain(state.key.repository)
        let workflow = CardText.plain(state.workflowName ?? "workflow")
        let plan = StepPlanner.plan(for: state)
        var lines: [String] = []
        var url = state.runURL
        let title: String
        switch reason {
        case .failure:
            let verb = state.completion?.conclusion == "timed_out" ? "timed out" : "failed"
            title = "\(repository) · \(workflow) \(verb)"
            if let group = plan.firstFailedGroup {
                let job = group.jobs.first(where: \.failed)
                var line = "\(CardText.plain(ActivityContentBuilder.label(group.name))) failed"
                if let step = job?.failedStep { line += " at “\(CardText.plain(step))”" }
                lines.append(line)
                if let log = job?.htmlURL, log.count <= urlLimit { url = log }
            }
        case .fixed:
            title = "\(repository) · \(workflow) fixed"
            // A re-run that passed after its attempt failed is flaky, not fixed by a change.
            lines.append(state.passedOnRerun ? "Passed on re-run (attempt \(state.key.attempt))" : "Passing again")
        case .waiting:
            title = "\(repository) · \(workflow) waiting for approval"
            if let environment = plan.groups.lazy.compactMap(\.waitingEnvironment).first, !environment.isEmpty {
                lines.append("Deployment to \(CardText.plain(environment)) waits for a review")
            } else {
                lines.append("A job waits for a review")
            }
        case .queued:
            title = "\(repository) · \(workflow) waiting for a runner"
            if let job = RunnerWaitBook.longestQueued(state), let created = job.createdAt {
                let minutes = Int(max(0, (state.queuedAlertAt ?? created) - created) / 60)
                var line = "\(CardText.plain(job.name)) queued for \(RunnerWait.duration(minutes: minutes))"
                let labels = (job.labels ?? []).map(CardText.plain).filter { !$0.isEmpty }
                if !labels.isEmpty { line += " · " + labels.joined(separator: ", ") }
                lines.append(line)
                if let page = job.htmlURL, page.count <= urlLimit { url = page }
            } else {
                lines.append("A job waits for a runner")
            }
        case .actionFailed:
            let note = state.actionNote
            title = "\(repository) · \(workflow): \((note?.kind.failedHeadline ?? "action failed").lowercased())"
            lines.append(CardText.plain(note?.text ?? "GitHub refused the action"))
        }
        let from = state.origin.fromText
        if let branch = state.headBranch {
            lines.append("on \(CardText.plain(branch))" + (from.map { " " + $0 } ?? ""))
        } else if let from {
            lines.append(from)
        }
        if let commit = state.run?.commitTitle, !commit.isEmpty { lines.append(CardText.plain(commit)) }
        if let actor = state.person { lines.append("by \(CardText.plain(actor))") }
        var object: [String: JSONValue] = [
            "title": .string(CardText.clamp(title, to: titleLimit)),
            "body": .string(CardText.clamp(lines.joined(separator: "\n"), to: bodyLimit)),
            "level": .string(level.rawValue),
            "thread_id": .string(threadID(repository: state.key.repository, workflow: state.workflowName)),
            "collapse_id": .string(collapseID(for: state)),
            "source": "pushward-bridge",
            "source_display_name": "GitHub Actions",
        ]
        if url.count <= urlLimit, url.hasPrefix("https://") || url.hasPrefix("http://") { object["url"] = .string(url) }
        if let target { object["target"] = target.json }
        if !actions.isEmpty { object["actions"] = .array(actions) }
        return .object(object)
    }

    /// Notification Center's group: one per repository + workflow. Hashed, so any name fits the
    /// 128-character limit and none leaks into a field PushWard does not display.
    public static func threadID(repository: String, workflow: String?) -> String {
        "gh-" + String(SHA256.hexDigest(of: repository + "\n" + (workflow ?? "")).prefix(32))
    }

    /// APNs' replace key: one per repository + workflow + branch, so the "fixed" alert of a later
    /// run replaces the failure alert it answers, and a POST retried after a lost answer replaces
    /// its first copy instead of showing twice.
    public static func collapseID(repository: String, workflow: String?, branch: String?) -> String {
        "gh-" + String(SHA256.hexDigest(of: repository + "\n" + (workflow ?? "") + "\n" + (branch ?? "")).prefix(32))
    }

    /// The run's replace key: the repository's own runs share one per workflow and branch; a
    /// fork's branch is its own (`RunState.historyBranch`), so a fork's alert never replaces the
    /// repository's; a run of unknown origin replaces only its own alerts (no branch name holds
    /// the `:` that begins its key).
    public static func collapseID(for state: RunState) -> String {
        let branch =
            state.origin == .unknown
            ? ":run:\(state.key.runID):\(state.key.attempt)" : state.historyBranch
        return collapseID(repository: state.key.repository, workflow: state.workflowName, branch: branch)
    }
}
