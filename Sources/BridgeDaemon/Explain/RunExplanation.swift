import BridgeCore
import BridgeStore
import Foundation

/// Why a card looks as it does, in sentences: where the step shape came from, why a live window
/// was or was not sent, why a visible change did not go out as its own update, what PushWard said, why a delivery was ignored or a run superseded.
/// Pure: everything comes from what the store recorded (the deliveries with their payloads).
public enum RunExplanation {
    public struct Facts: Sendable {
        public var run: StoredRun
        public var session: StoredSession?
        public var acknowledged: JSONValue?
        public var requests: [RequestRecord]
        public var deliveries: [DeliveryRecord]
        public var settings: ActivitySettings
        /// The alerts of the run id (every attempt's).
        public var alerts: [AlertRecord]
        /// The redeliveries recovery asked GitHub for, by GUID, among `deliveries`.
        public var recovered: [String: RecoveryRequest]
        /// The buttons pressed for the run id (every attempt's), from phones.
        public var actions: [ActionRecord]
        /// The filters, for whether the run is withheld from the phone (`CardWithholding`).
        public var filter: DeliveryFilter

        public init(
            run: StoredRun, session: StoredSession?, acknowledged: JSONValue?, requests: [RequestRecord],
            deliveries: [DeliveryRecord], settings: ActivitySettings, alerts: [AlertRecord] = [],
            recovered: [String: RecoveryRequest] = [:], actions: [ActionRecord] = [],
            filter: DeliveryFilter = DeliveryFilter()
        ) {
            self.filter = filter
            self.run = run
            self.session = session
            self.acknowledged = acknowledged
            self.requests = requests
            self.deliveries = deliveries
            self.settings = settings
            self.alerts = alerts
            self.recovered = recovered
            self.actions = actions
        }
    }

    public static func sentences(_ facts: Facts) -> [String] {
        let state = facts.run.state
        let plan = StepPlanner.plan(for: state)
        var sentences: [String] = []
        let workflow = state.workflowName ?? "its workflow"
        let branch = (state.headBranch.map { " on \($0)" } ?? "") + (state.origin.fromText.map { " " + $0 } ?? "")
        sentences.append(
            "Run \(state.key.runID) attempt \(state.key.attempt) of \(state.key.repository) (\(workflow)\(branch)) "
                + "draws on the card \(facts.run.slug), "
                + (facts.settings.scope == .repository
                    ? "the repository's card (scope repository: one card per repository)."
                    : "its workflow's card (scope workflow)."))
        sentences += origin(state)
        if let withheld = CardWithholding.of(state, filter: facts.filter) {
            sentences.append("It draws no card: " + withheld.reason + ".")
        }
        sentences += ownership(facts)
        if let placement = state.placement {
            sentences.append(
                placement.sentence(slots: facts.settings.slotsPerPerson, formatTime: { GitHubTimestamp.format($0) }))
        }
        sentences += shape(state, plan: plan)
        sentences += weights(plan)
        sentences += windows(facts, plan: plan)
        sentences += heldChanges(facts)
        sentences += ending(facts)
        sentences += problems(facts)
        sentences += facts.alerts.filter { $0.run == state.key }.map(AlertSummary.sentence)
        sentences += facts.actions.filter { $0.run == state.key }.map(ActionSummary.sentence)
        sentences += deliveries(facts.deliveries, recovered: facts.recovered)
        return sentences
    }

    /// What a fork's run (or one whose origin no delivery has told yet) is withheld.
    static func origin(_ state: RunState) -> [String] {
        switch state.origin {
        case .base:
            return []
        case .fork:
            return [
                "Its commit comes \(state.origin.fromText ?? "from a fork"), a fork whose author chose its branch and, "
                    + "on pull_request, its workflow and job names: only alert rules and widgets with \"forks\": true "
                    + "cover it, it gets no button that acts on GitHub, and its alerts replace only its own."
            ]
        case .unknown:
            return [
                "No workflow_run delivery or lookup has said which repository its commit comes from yet: until one "
                    + "does it gets no buttons, no widget, no \"fixed\" alert, and its alerts replace only its own."
            ]
        }
    }

    static func ownership(_ facts: Facts) -> [String] {
        let key = facts.run.state.key
        guard let session = facts.session?.session else {
            return ["No card was written for it yet."]
        }
        if session.owner == key {
            let reach = session.identity.target.map { " It reaches \($0.description) (routing)." } ?? ""
            if let place = facts.run.state.placement?.place, place != .card {
                return ["It owns the card, which does not show while the run has no slot (see below)." + reach]
            }
            return ["It holds the card now (phase: \(describe(session.phase)))." + reach]
        }
        let holder = session.owner.map { "run \($0.runID) attempt \($0.attempt)" } ?? "no run"
        if facts.run.state.completion != nil, facts.requests.isEmpty {
            return [
                "It never drew on the card: \(holder) held it, and this run finished meanwhile, so it had nothing "
                    + "left to show (the newest run owns a card; a finished run does not take it back)."
            ]
        }
        if facts.run.state.completion == nil {
            return [
                "It does not hold the card: \(holder) is newer and took it over; this run takes it back if that one "
                    + "ends while this is still in progress."
            ]
        }
        return ["The card has since passed to \(holder)."]
    }

    static func describe(_ phase: ActivitySession.Phase) -> String {
        switch phase {
        case .needsCreate: "waiting to create the activity"
        case .needsFirstFrame: "created, the first frame is next"
        case .live: "live"
        case .finalShown: "showing the end frame"
        case .ended: "ended"
        }
    }

    static func shape(_ state: RunState, plan: StepPlan) -> [String] {
        var sentences: [String] = []
        let steps = plan.groups.map(\.name).joined(separator: ", ")
        if let seed = state.seed {
            let finished = GitHubTimestamp.format(seed.finishedAt)
            sentences.append(
                "Its \(plan.totalSteps) steps (\(steps)) were seeded from run \(seed.key.runID) "
                    + "(\(seed.conclusion) on \(seed.branch ?? "an unknown branch"), finished \(finished)), so "
                    + "total_steps was right from the first frame although GitHub creates needs: jobs late.")
            let unseen = plan.groups.filter { $0.origin == .seeded }.map(\.name)
            if !unseen.isEmpty {
                sentences.append(
                    "Steps known from that run but not created in this one yet: \(unseen.joined(separator: ", "))"
                        + (state.completion != nil ? " (drawn complete at the end)." : "."))
            }
        } else {
            sentences.append(
                "No earlier finished run of this workflow was known, so the steps (\(steps)) grew live as GitHub "
                    + "created jobs; total_steps never shrinks within an attempt.")
        }
        let inherited = plan.groups.filter { $0.origin == .inherited && $0.completedEarlier }.map(\.name)
        if state.key.attempt > 1 {
            sentences.append(
                inherited.isEmpty
                    ? "It is attempt \(state.key.attempt); every step of the earlier attempt runs again."
                    : "It is attempt \(state.key.attempt): \(inherited.joined(separator: ", ")) succeeded before and "
                        + "are drawn complete unless re-run.")
        }
        let fanOut = plan.groups.filter { $0.totalJobCount > 1 }
        for group in fanOut where group.totalJobCount > 10 {
            sentences.append(
                "\(group.name) has \(group.totalJobCount) parallel jobs; the card draws 10 rows (PushWard's limit) "
                    + "and counts all of them.")
        }
        return sentences
    }

    static func weights(_ plan: StepPlan) -> [String] {
        let timed = plan.groups.compactMap { group in group.estimate.map { (group.name, $0) } }
        guard !timed.isEmpty else {
            return [
                "No step has a recorded duration, so the card uses the plain equal-width matrix and no live window."
            ]
        }
        let figures = timed.map { "\($0.0) \(Int($0.1.rounded())) s" }.joined(separator: ", ")
        let untimed = plan.groups.filter { $0.estimate == nil }.map(\.name)
        var sentence =
            "Step widths are each step's median duration over the last \(RunHistory.estimateWindow) runs "
            + "(the longest job of a fan-out): \(figures)"
        sentence += untimed.isEmpty ? "." : "; \(untimed.joined(separator: ", ")) had no history and got the mean."
        return [sentence]
    }

    static func windows(_ facts: Facts, plan: StepPlan) -> [String] {
        var sentences: [String] = []
        var step: Int?
        for push in facts.requests where push.method == "PATCH" {
            guard let content = (try? JSONValue(parsing: Data(push.body.utf8)))?["content"]?.objectValue else {
                continue
            }
            let newStep = content["current_step"]?.intValue ?? step
            defer { step = newStep }
            guard newStep != step, let current = newStep, current >= 1, current <= plan.groups.count else { continue }
            let name = plan.groups[current - 1].name
            let at = GitHubTimestamp.format(push.sentAt)
            if let duration = content["duration"]?.intValue {
                let estimate = plan.groups[current - 1].estimate.map { " of an expected \(Int($0.rounded())) s" } ?? ""
                sentences.append(
                    "At \(at) the card moved to step \(current) (\(name)) with a \(duration) s live window: "
                        + "the time still ahead\(estimate), sent only with the step change.")
            } else if content["live_progress"] == .null {
                sentences.append(
                    "At \(at) the card moved to step \(current) (\(name)); it has no estimate with 5 s or more ahead, "
                        + "so the previous step's window was cleared.")
            }
        }
        return sentences
    }

    static func ending(_ facts: Facts) -> [String] {
        guard let completion = facts.run.state.completion else {
            let current = StepPlanner.plan(for: facts.run.state)
            return ["It is still running: step \(current.currentStep) of \(current.totalSteps)."]
        }
        let at = GitHubTimestamp.format(completion.recognizedAt)
        var sentences: [String] = []
        switch completion.source {
        case .runEvent:
            sentences.append("The run completed (\(completion.conclusion)); the bridge learned it at \(at).")
        case .inferred:
            sentences.append(
                "Its completed delivery never arrived: every job had finished and nothing came for "
                    + "\(Int(facts.settings.completionGrace)) s, so at \(at) it was taken as finished, conclusion "
                    + "inferred from its jobs: \(completion.conclusion).")
        }
        if let final = facts.requests.first(where: { $0.kind == "finalFrame" }) {
            sentences.append(
                "The end frame went out at \(GitHubTimestamp.format(final.sentAt)) (end_delay "
                    + "\(Int(facts.settings.endDelay)) s, so late job deliveries could still land in it).")
        }
        if let end = facts.requests.first(where: { $0.kind == "end" }) {
            sentences.append("The activity was ended at \(GitHubTimestamp.format(end.sentAt)).")
        }
        if facts.requests.contains(where: { $0.kind == "correction" }) {
            sentences.append(
                "Deliveries arrived after the end (GitHub does not order them), so the ended card got a correction.")
        }
        if let deletion = facts.requests.first(where: {
            $0.kind == PlannedRequest.Kind.delete.rawValue && $0.outcome == "acknowledged"
        }) {
            sentences.append(
                "The ended activity was deleted from PushWard at \(GitHubTimestamp.format(deletion.sentAt)) "
                    + "to make room on the account's 50 (the bridge keeps its ended activities for the next run "
                    + "and deletes its oldest from 45 on, or when a create met the cap); a DELETE costs no update.")
        }
        return sentences
    }

    /// The field a rejected request's answer named and the card dropped (`RefusedField`): both
    /// record the problem's summary.
    static func droppedField(_ push: RequestRecord, _ facts: Facts) -> String? {
        guard let session = facts.session?.session, session.owner == facts.run.state.key,
            let dropped = session.droppedFields
        else { return nil }
        return dropped.first { $0.value == push.detail }?.key
    }

    static func problems(_ facts: Facts) -> [String] {
        var sentences: [String] = []
        for push in facts.requests where push.outcome != "acknowledged" && push.outcome != "dry-run" {
            let at = GitHubTimestamp.format(push.sentAt)
            let detail = push.detail.map { ": \($0)" } ?? ""
            switch push.outcome {
            case "rejected":
                sentences.append("At \(at) PushWard rejected a \(push.kind)\(detail); that body is never sent again.")
                if let field = droppedField(push, facts) {
                    sentences.append(
                        "The card's frames went on without \(field), the field PushWard refused, so the card kept "
                            + "moving to its end.")
                }
            case "retry":
                sentences.append(
                    "At \(at) a \(push.kind) got no usable answer\(detail); it was retried with the latest state.")
            case "recreate":
                sentences.append(
                    "At \(at) the activity was gone on PushWard (404); it was created again and sent whole.")
            case "quota_exhausted":
                sentences.append("At \(at) PushWard's quota was exhausted\(detail); nothing was sent until it reset.")
            case "rate_limited":
                sentences.append("At \(at) PushWard rate-limited the bridge\(detail); every card waited.")
            case "unauthorized":
                sentences.append("At \(at) PushWard refused the API key\(detail).")
            case "room_needed":
                sentences.append(
                    "At \(at) the create met the account's limit of 50 activities\(detail); the bridge deleted its "
                        + "oldest ended activity (if it had one ended) and created the card again once that was "
                        + "answered; until then the run waited without a card.")
            default:
                sentences.append("At \(at) a \(push.kind) ended as \(push.outcome)\(detail).")
            }
        }
        if facts.requests.allSatisfy({ $0.outcome == "dry-run" }), !facts.requests.isEmpty {
            sentences.append("The bridge runs in dry-run mode (no API key): these requests were recorded, not sent.")
        }
        return sentences
    }

    static func deliveries(_ deliveries: [DeliveryRecord], recovered: [String: RecoveryRequest] = [:]) -> [String] {
        guard !deliveries.isEmpty else { return [] }
        let applied = deliveries.filter { $0.outcome == .applied }.count
        let duplicates = deliveries.reduce(0) { $0 + $1.duplicates }
        var sentence = "\(deliveries.count) deliveries were recorded for it: \(applied) applied"
        if duplicates > 0 { sentence += ", \(duplicates) redelivered duplicates recorded and not applied again" }
        sentence += "."
        var sentences = [sentence]
        let redelivered = deliveries.filter { recovered[$0.id] != nil }
        if !redelivered.isEmpty {
            sentences.append(
                "\(redelivered.count) of them came back through recovery: GitHub had failed to deliver them (the "
                    + "listener was down or unreachable), the bridge found them in the hook's delivery log and asked "
                    + "GitHub to send them again.")
        }
        let fromAPI = deliveries.filter { $0.hookID == APIObservation.hookID }
        if !fromAPI.isEmpty {
            sentences.append(
                "\(fromAPI.count) were read from GitHub's API rather than sent by its webhook: the run had gone quiet "
                    + "for github.api.stale_after, so the bridge looked it up.")
        }
        if let completed = fromAPI.first(where: { $0.event == "workflow_run" && $0.action == "completed" }),
            completed.outcome == .applied
        {
            sentences.append(
                "The run was completed from GitHub's API at \(GitHubTimestamp.format(completed.receivedAt)): its own "
                    + "completed delivery never arrived, and GitHub's answer gave its conclusion.")
        }
        for delivery in deliveries where delivery.outcome != .applied {
            sentences.append(explain(delivery))
        }
        return sentences
    }

    /// One delivery, in a sentence: `explain --delivery ID`.
    public static func explain(_ delivery: DeliveryRecord) -> String {
        let what = delivery.event + (delivery.action.map { ".\($0)" } ?? "")
        let run =
            delivery.runID.map { " for \(delivery.repository ?? "?") run \($0) attempt \(delivery.runAttempt ?? 1)" }
            ?? (delivery.repository.map { " for \($0)" } ?? "")
        let at = GitHubTimestamp.format(delivery.receivedAt)
        var sentence = "Delivery \(delivery.id) (\(what)\(run)) arrived at \(at) and "
        switch delivery.outcome {
        case .applied:
            sentence += "was applied to the run's state in the same transaction that recorded it; GitHub got 202."
        case .ignored:
            sentence += "was ignored on purpose: \(delivery.reason ?? "no reason recorded"); GitHub got 200."
        case .rejected:
            sentence += "was rejected: \(delivery.reason ?? "no reason recorded"); GitHub got 400."
        }
        if delivery.hookID == APIObservation.hookID {
            sentence += " It was read from GitHub's API (a lookup of the quiet run), not sent by GitHub's webhook."
        }
        if delivery.duplicates > 0 {
            sentence +=
                " GitHub delivered it \(delivery.duplicates) more time\(delivery.duplicates == 1 ? "" : "s"); "
                + "those were recorded as duplicates (200) and not applied again."
        }
        return sentence
    }
}
