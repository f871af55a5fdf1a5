/// What one step of the engine changed, as the rows the store writes: each run with its slug and
/// the jobs whose records moved, the history of runs that finished, arrival counts, the gate, and
/// each session the step touched with its desired content already built. The store writes these
/// and computes nothing of the domain (`BridgeDatabase.save`).
public struct EngineRows: Sendable {
    public struct Run: Sendable {
        public var state: RunState
        public var slug: String
        public var released: Bool
        /// The job records to write (those that changed), by id.
        public var jobs: [JobRecord]
    }

    public struct Session: Sendable {
        public var session: ActivitySession
        public var floor: ProgressFloor?
        /// What the core wants shown now, nil when nothing is (the activity has no owner).
        public var desired: DesiredActivity?
    }

    public var runs: [Run] = []
    public var history: [RunSummary] = []
    /// Hours (seconds since 1970 / 3600) and the new runs counted in each.
    public var arrivals: [(hour: Int, runs: Int)] = []
    /// The gate, when it changed.
    public var gate: DispatchGate?
    public var sessions: [Session] = []
    /// Notifications planned, each recorded once per run and reason before it is sent.
    public var alerts: [PlannedAlert] = []
    /// Widgets whose state changed.
    public var widgets: [WidgetSession] = []

    public init() {}
}
