import BridgeCore
import BridgeStore
import Foundation

/// Why a visible change of the card did not go out as its own update: the push economy
/// (coalescing, settling, the run's level, the hourly cap, the budget) spends fewer of PushWard's
/// paid updates by holding changes back, and a maintainer looking at a card that moved late should
/// be told which rule held it and which request finally carried it.
///
/// Worked out purely: the run's recorded deliveries are played twice through the core (see
/// `CardReplay`), once with settings that push every visible change as it happens, once with the
/// configured economy at the level the run was drawn at; each change of the first that the second
/// did not show at that moment was held, and the reconciler's `HoldReason` then says why.
extension RunExplanation {
    /// One visible change the configured economy did not send when it happened.
    struct HeldChange {
        var at: UnixTime
        var what: String
        var decision: ReconcileDecision?
        /// The request that finally carried it, if the replay saw one.
        var carriedBy: CardReplay.Send?
        /// Held first for another reason, then kept back by the hourly cap until `carriedBy`.
        var thenCapped = false
    }

    /// Request kinds that change what the card shows (a POST and a heartbeat show nothing new).
    static let visibleKinds: Set<PlannedRequest.Kind> = [.firstFrame, .update, .finalFrame, .correction]

    static func heldChanges(_ facts: Facts) -> [String] {
        let key = facts.run.state.key
        let applied = facts.deliveries.filter { $0.outcome == .applied }
        // The store lists newest first; the replay needs them in the order they arrived.
        let events: [(event: WebhookEvent, at: UnixTime)] = applied.reversed().enumerated()
            .sorted { ($0.element.receivedAt, $0.offset) < ($1.element.receivedAt, $1.offset) }
            .compactMap { _, record in
                guard let payload = record.payload,
                    let event = try? WebhookDecoder.decode(
                        event: record.event, body: payload, contentType: record.contentType)
                else { return nil }
                return (event, record.receivedAt)
            }
        guard !events.isEmpty else {
            return applied.isEmpty
                ? []
                : [
                    "Its deliveries' payloads are no longer kept (retention), so whether changes were held back "
                        + "cannot be worked out again."
                ]
        }
        var everyChange = CardReplay(run: key, settings: facts.settings.pushingEveryChange())
        for (event, at) in events { everyChange.feed(event, at: at) }
        everyChange.run(until: horizon(after: events.last?.at ?? 0, facts.settings))
        let visible = everyChange.sends.filter { visibleKinds.contains($0.kind) }
        guard !visible.isEmpty else { return [] }
        let decision = facts.run.state.cardDecision
        if let decision, decision.level == nil {
            return [
                "None of its \(count(visible.count, "visible change")) went out: the budget gave the run no card "
                    + "(\(decision.reason))."
            ]
        }
        var economySettings = facts.settings
        if economySettings.fidelity == .auto, let level = decision?.level { economySettings.fidelity = level }
        var economy = CardReplay(run: key, settings: economySettings)
        var pending = events[...]
        var held: [HeldChange] = []
        for change in visible {
            while let next = pending.first, next.at <= change.at {
                economy.feed(next.event, at: next.at)
                pending = pending.dropFirst()
            }
            economy.run(until: change.at)
            let shown = economy.shown ?? [:]
            let fields = change.patch.keys.filter { !windowFields.contains($0) }
            guard fields.contains(where: { (shown[$0] ?? .null) != (change.shown[$0] ?? .null) }) else { continue }
            held.append(
                HeldChange(
                    at: change.at, what: describe(change, state: facts.run.state),
                    decision: economy.decisions[change.at], carriedBy: nil))
        }
        for (event, at) in pending { economy.feed(event, at: at) }
        economy.run(until: horizon(after: events.last?.at ?? 0, economySettings))
        guard !held.isEmpty else {
            return ["Each of its \(count(visible.count, "visible change")) went out as its own update."]
        }
        for index in held.indices {
            let change = held[index]
            let carriedBy = economy.sends.first { $0.at > change.at }
            held[index].carriedBy = carriedBy
            if change.decision != nil, reasonKey(change.decision) != HoldReason.hourlyCap.rawValue {
                held[index].thenCapped = economy.decisions.contains { at, decision in
                    at > change.at && at < (carriedBy?.at ?? .infinity)
                        && reasonKey(decision) == HoldReason.hourlyCap.rawValue
                }
            }
        }
        let level = economySettings.fidelity == .auto ? Fidelity.full : economySettings.fidelity
        var sentences = [
            "Of its \(count(visible.count, "visible change")), \(visible.count - held.count) went out as their own "
                + "update and \(held.count) did not, to spend fewer of PushWard's paid updates:"
        ]
        var group: [HeldChange] = []
        for change in held {
            if let first = group.first, !sameGroup(first, change) {
                sentences.append(sentence(group, facts: facts, level: level))
                group = []
            }
            group.append(change)
        }
        if !group.isEmpty { sentences.append(sentence(group, facts: facts, level: level)) }
        return sentences
    }

    /// The window fields follow the step and count down on the phone: not a change of their own.
    static let windowFields: Set<String> = ["live_progress", "start_date", "end_date", "duration"]

    /// Past the last delivery, long enough for the end frame, a grace period and every hold
    /// short of a heartbeat to play out.
    static func horizon(after last: UnixTime, _ settings: ActivitySettings) -> UnixTime {
        last + settings.completionGrace + settings.endDelay + settings.endDisplayTime + settings.minUpdateInterval
            + settings.maxHold + 1
    }

    static func sameGroup(_ a: HeldChange, _ b: HeldChange) -> Bool {
        reasonKey(a.decision) == reasonKey(b.decision) && a.carriedBy?.at == b.carriedBy?.at
            && a.thenCapped == b.thenCapped
    }

    static func reasonKey(_ decision: ReconcileDecision?) -> String {
        switch decision {
        case .hold(_, let reason): reason.rawValue
        case .wait: "wait"
        default: "other"
        }
    }

    /// A held change in a few words: the step it moved to, else the line the card shows.
    static func describe(_ change: CardReplay.Send, state: RunState) -> String {
        if change.kind == .finalFrame { return "the end frame" }
        if let step = change.patch["current_step"]?.intValue {
            let groups = StepPlanner.plan(for: state).groups
            // A step named like its number ("step 3") is not named twice.
            guard step >= 1, step <= groups.count, groups[step - 1].name.lowercased() != "step \(step)" else {
                return "step \(step)"
            }
            return "step \(step) (\(TerminalText.sanitized(groups[step - 1].name)))"
        }
        if let text = change.patch["state"]?.stringValue { return "“\(TerminalText.sanitized(text))”" }
        return change.patch.keys.filter { !windowFields.contains($0) }.sorted().joined(separator: ", ")
    }

    static func sentence(_ group: [HeldChange], facts: Facts, level: Fidelity) -> String {
        let settings = facts.settings
        let shown = group.prefix(4).map { "\(GitHubTimestamp.format($0.at)) (\($0.what))" }
        var which = shown.count == 1 ? shown[0] : shown.dropLast().joined(separator: ", ") + " and " + shown.last!
        if group.count > 4 { which = shown.joined(separator: ", ") + " and \(group.count - 4) more" }
        let subject = group.count == 1 ? "The change at \(which) was" : "The changes at \(which) were"
        let why: String
        let verb: String
        switch group[0].decision {
        case .hold(_, .coalescing):
            why =
                "held in the coalesce window (coalesce \(seconds(settings.coalesce)): a change inside a step waits "
                + "for the ones that follow, and the counts move at most once every \(seconds(settings.maxHold)))"
            verb = "merged into"
        case .hold(_, .settling):
            why =
                "held for the settle window (\(seconds(settings.settle)) after a step change, for what usually "
                + "follows it at once)"
            verb = "merged into"
        case .hold(_, .belowLevel):
            var text = "below the run's level, \(level.rawValue) (\(pushes(level)))"
            if facts.settings.fidelity == .auto, let decision = facts.run.state.cardDecision {
                text += "; the budget drew the run at that level: \(decision.reason)"
            }
            why = text
            verb = "rode along with"
        case .hold(_, .hourlyCap):
            why = "held by the hourly cap (\(cap(settings)))"
            verb = "went out with"
        case .wait:
            why = "held by min_update_interval (\(seconds(settings.minUpdateInterval)) between updates of a card)"
            verb = "went out with"
        default:
            why = "not sent while it was current"
            verb = "went out with"
        }
        if group[0].thenCapped {
            return "\(subject) \(why), then by the hourly cap (\(cap(settings))), and "
                + (group[0].carriedBy.map { "went out with \(name($0.kind)) at \(GitHubTimestamp.format($0.at))" }
                    ?? "no later request carried it") + "."
        }
        let carried =
            group[0].carriedBy.map { "\(verb) \(name($0.kind)) at \(GitHubTimestamp.format($0.at))" }
            ?? "no later request carried it"
        return "\(subject) \(why), and \(carried)."
    }

    static func cap(_ settings: ActivitySettings) -> String {
        "max_updates_per_hour \(settings.maxUpdatesPerHour) a card, \(ActivitySettings.reservedForEnd) of them kept "
            + "for the end frame and the end"
    }

    static func pushes(_ level: Fidelity) -> String {
        switch level {
        case .steps: "it pushes step changes, the first failure and the end, not the counts inside a step"
        case .milestones: "it pushes the first frame, the first failure and the end, nothing in between"
        case .full, .auto: "it pushes every change"
        }
    }

    static func name(_ kind: PlannedRequest.Kind) -> String {
        switch kind {
        case .update: "the update"
        case .heartbeat: "the heartbeat"
        case .finalFrame: "the end frame"
        case .firstFrame: "the first frame"
        case .correction: "the correction"
        case .end: "the end"
        case .create: "the create"
        case .delete: "the deletion"
        }
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : String(format: "%.1f s", value)
    }

    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }
}
