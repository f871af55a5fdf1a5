/// The engine's alert feature: which changes of a run may alert, and the runs that finished by the
/// grace period (or whose job crossed `queued_after`) since alerts were last planned (`BridgeEngine.planAlerts(history:)`): time moves
/// without a history provider to ask whether a success fixed something, so those wait here for
/// the next planning.
public struct AlertBook: Sendable {
    private var checks: [RunKey: Set<AlertReason>] = [:]

    public init() {}

    /// The runs waiting to be planned, in key order, with the reasons each may alert for.
    public var pending: [(RunKey, Set<AlertReason>)] {
        checks.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// `key`'s run may alert for `reasons` once planned.
    public mutating func check(_ key: RunKey, for reasons: Set<AlertReason>) {
        guard !reasons.isEmpty else { return }
        checks[key, default: []].formUnion(reasons)
    }

    /// `key`'s run was planned.
    public mutating func planned(_ key: RunKey) {
        checks[key] = nil
    }

    /// What a change of a run's state may alert for: a completion that failed or succeeded (a
    /// success alerts only when it fixes something, which planning asks history about), and a
    /// job that began to wait for a review. A review is asked for only once the run's origin is
    /// known: a job can wait before the `workflow_run` delivery says whether the run is a fork's,
    /// and the question (with its Approve and Reject for the repository's own run) waits for it.
    public static func transitions(from before: RunState, to after: RunState) -> Set<AlertReason> {
        var reasons: Set<AlertReason> = []
        if before.completion == nil, let completion = after.completion {
            if AlertReason.failedConclusions.contains(completion.conclusion) {
                reasons.insert(.failure)
            } else if completion.conclusion == "success" {
                reasons.insert(.fixed)
            }
        }
        let waitingBefore = before.origin == .unknown ? [] : Set(before.jobs.values.filter(\.isWaiting).map(\.id))
        if after.completion == nil, after.origin != .unknown,
            after.jobs.values.contains(where: { $0.isWaiting && !waitingBefore.contains($0.id) })
        {
            reasons.insert(.waiting)
        }
        return reasons
    }

    /// The buttons an alert carries: "Re-run failed jobs" on a failure, Approve and Reject on a
    /// review, when the `actions` rules offer them.
    public static func notificationActions(
        for reason: AlertReason, offers: Set<ActionKind>, settings: ActionSettings?
    ) -> [JSONValue] {
        guard let settings else { return [] }
        let kinds: [ActionKind] =
            switch reason {
            case .failure: offers.contains(.rerun) ? [.rerun] : []
            case .waiting: offers.contains(.approve) ? [.approve, .reject] : []
            case .fixed, .queued, .actionFailed: []
            }
        return kinds.map(settings.notificationAction)
    }
}
