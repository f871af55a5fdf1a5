/// What the engine's features hold, read through the engine: the daemon, the store, `render` and
/// the tests read runs, cards and the gate here. Read-only but for the inputs the daemon supplies
/// from outside the core (the budget from `GET /auth/me`, the pacer), which go to their feature's
/// own method.
extension BridgeEngine {
    // MARK: Configuration

    public var settings: ActivitySettings { configuration.settings }
    public var filter: DeliveryFilter { configuration.filter }
    /// Which runs notify, for which reasons (the `alerts` section; off by default).
    public var alertSettings: AlertSettings { configuration.alerts }
    /// Buttons that act on GitHub from the phone (the `actions` section; off by default).
    public var actionSettings: ActionSettings? { configuration.actions }
    /// Whose phones a run's card and alerts go to (the `routing` section; off by default).
    public var routing: RoutingSettings { configuration.routing }
    /// The configured home-screen widgets (`widgets`; none by default).
    public var widgetSettings: [WidgetSettings] { configuration.widgets }

    // MARK: Runs

    public var runs: [RunKey: RunState] { runBook.states }
    /// The card each run draws on, fixed when the run is first seen.
    public var slugs: [RunKey: String] { runBook.slugs }
    /// Runs done with their card: ended on it, or finished while another run held it.
    public var released: Set<RunKey> { runBook.released }
    /// The finished runs of the workflows seen lately.
    public var history: HistoryCache { runBook.history }
    /// The runs that may still hold each card.
    var contendersBySlug: [String: Set<RunKey>] { runBook.contendersBySlug }

    // MARK: Cards and the economy

    public var sessions: [String: ActivitySession] { cardBook.sessions }
    public var progressFloors: [String: ProgressFloor] { cardBook.progressFloors }
    /// Where the month's updates stand (from `GET /auth/me`); nil: not known.
    public var budget: PushBudget? {
        get { cardBook.budget }
        set { cardBook.use(budget: newValue) }
    }
    /// Runs that wanted a card, per hour of the last 14 days: the planner's forecast.
    public var arrivals: RunArrivals { cardBook.arrivals }
    /// The level the planner chose last.
    public var levelInForce: Fidelity? { cardBook.levelInForce }

    // MARK: Dispatch

    /// What holds back every request (quota, rate limit, refused key, circuit breaker).
    public var gate: DispatchGate { dispatch.gate }
    /// Keeps the requests to PushWard under its per-minute limit; nil: unpaced.
    public var pacer: RequestPacer? {
        get { dispatch.pacer }
        set { dispatch.use(pacer: newValue) }
    }
    /// The configured API key's fingerprint (`useKey`), recorded with a refused target.
    public var keyFingerprint: String? { dispatch.keyFingerprint }

    // MARK: Widgets

    /// Each configured widget's state, by slug.
    public var widgets: [String: WidgetSession] { widgetBook.sessions }
    /// Where the month's widget updates stand, and a pause after PushWard said they are spent.
    public var widgetBudget: WidgetBudget { widgetBook.budget }

    /// Where the month's widget updates stand, from `GET /auth/me`.
    public mutating func noteWidgetUsage(used: Int?, limit: Int?) {
        widgetBook.noteUsage(used: used, limit: limit)
    }
}
