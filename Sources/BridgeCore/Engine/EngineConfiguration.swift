/// What the engine is told once, when it is made: how cards look and pace (`activity`), which
/// deliveries count (`filters`), which runs notify (`alerts`), which buttons a card offers
/// (`actions`), whose phones a run goes to (`routing`) and the home-screen widgets (`widgets`).
///
/// Immutable, so no feature can move another's rules under it mid-step; the one change after
/// start, new filters on SIGHUP, makes a new value (`replacing(filter:)`) that the engine swaps in
/// whole.
public struct EngineConfiguration: Sendable {
    public let settings: ActivitySettings
    public let filter: DeliveryFilter
    public let alerts: AlertSettings
    public let actions: ActionSettings?
    public let routing: RoutingSettings
    public let widgets: [WidgetSettings]

    public init(
        settings: ActivitySettings = ActivitySettings(), filter: DeliveryFilter = DeliveryFilter(),
        alerts: AlertSettings = AlertSettings(), actions: ActionSettings? = nil,
        routing: RoutingSettings = RoutingSettings(), widgets: [WidgetSettings] = []
    ) {
        self.settings = settings
        self.filter = filter
        self.alerts = alerts
        self.actions = actions
        self.routing = routing
        self.widgets = widgets
    }

    /// The same rules with other filters (a reload of `filters`).
    public func replacing(filter: DeliveryFilter) -> EngineConfiguration {
        EngineConfiguration(
            settings: settings, filter: filter, alerts: alerts, actions: actions, routing: routing, widgets: widgets)
    }

    /// Whether a run's changes are worth planning notifications for: alerts, or the reviews and
    /// refusals the `actions` rules send.
    public var notifies: Bool { alerts.isEnabled || actions != nil }

    /// Where the run's card and alerts go under `routing`: everyone when routing is off.
    public func route(for state: RunState) -> Route {
        guard routing.isEnabled else { return .everyone }
        return routing.route(repository: state.key.repository, person: state.person)
    }

    /// The buttons the `actions` rules give `state`'s run; none without the section, for a run
    /// routed to nobody, or for a run not known to be the repository's own: a fork's author wrote
    /// what a button would cancel, approve or re-run (SECURITY.md, "Forks").
    public func offers(for state: RunState) -> Set<ActionKind> {
        guard let actions, route(for: state) != .nobody, state.origin.isBase else { return [] }
        let offers = actions.offers(for: AlertSubject(state))
        // Approve and Reject only where someone may press them (`Reviewer`).
        guard offers.contains(.approve), reviewers(for: state).isEmpty else { return offers }
        return offers.subtracting([.approve, .reject])
    }

    /// Who `state`'s deployment reviews go to (`Reviewer`); none without `actions`, for a run not
    /// known to be the repository's own, or when no approver may be reached.
    public func reviewers(for state: RunState) -> [Reviewer] {
        guard let actions, state.origin.isBase else { return [] }
        return Reviewer.of(state, approvers: actions.approvers(for: AlertSubject(state)), routing: routing)
    }
}
