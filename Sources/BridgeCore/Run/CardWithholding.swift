/// Why a run draws no card (and moves no widget) although it passed the filters, or nil when it
/// may draw one. Derived from the run's state and the filter each time it is asked, so a run that
/// later starts, or whose origin a later delivery tells, is asked again and gets its card then.
///
/// Nothing withheld costs anything: no card, no summary entry, no request. Alerts follow their
/// own rules (`AlertRule.forks`).
public enum CardWithholding: Sendable, Equatable {
    /// GitHub holds the run for a maintainer's approval (`action_required`, nothing ran): a
    /// first-time contributor's fork can open pull requests by the hundred, and each held run
    /// would cost a card's create, frames and end out of the month's budget. It gets its card
    /// when the approval starts it.
    case heldForApproval
    /// `filters.forks: false` and the run's commit comes from a fork.
    case fork(String)
    /// `filters.forks: false` and no `workflow_run` delivery has told where the commit comes from
    /// yet (only job deliveries, which do not say): the run waits for the one that does.
    case originUnknown

    /// What keeps `state` off the phone under `filter`, if anything.
    public static func of(_ state: RunState, filter: DeliveryFilter) -> CardWithholding? {
        if state.isHeldForApproval { return .heldForApproval }
        guard !filter.forks else { return nil }
        switch state.origin {
        case .base: return nil
        case .fork(let name): return .fork(name)
        case .unknown: return .originUnknown
        }
    }

    /// In words, for `runs show`, `explain` and the status page.
    public var reason: String {
        switch self {
        case .heldForApproval:
            "GitHub holds the run for a maintainer's approval (action_required): no card, no summary entry and "
                + "no request until it starts"
        case .fork(let name):
            "filters.forks is false and the run's commit comes from the fork \(CardText.fitted(name, to: 140)): "
                + "a fork's run gets no card and moves no widget"
        case .originUnknown:
            "filters.forks is false and no workflow_run delivery has said yet whether the commit comes from a "
                + "fork: no card until one does"
        }
    }
}
