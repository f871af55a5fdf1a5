/// The engine's pending changes: the runs, cards and history entries the steps since the last
/// `takeChanges()` touched, which are the rows the daemon writes. Every feature records here what
/// its methods changed; the engine hands it over whole.
public struct EngineChanges: Sendable, Equatable {
    public var runs: Set<RunKey> = []
    public var slugs: Set<String> = []
    /// Runs that finished (or finished again), as history now summarises them.
    public var history: [RunKey: RunSummary] = [:]
    /// The jobs (by id) whose records changed, per run: only those rows are written.
    public var jobs: [RunKey: Set<Int>] = [:]
    /// The dispatch gate changed.
    public var gate = false
    /// Hours (seconds since 1970 / 3600) whose count of new runs changed (`RunArrivals`).
    public var arrivalHours: Set<Int> = []
    /// Notifications planned, in the order planned; the store records each once per run and
    /// reason, so planning one again (a redelivery, a run finishing again) sends nothing twice.
    public var alerts: [PlannedAlert] = []
    /// Widgets whose state changed (a run followed, an answer).
    public var widgets: Set<String> = []

    public init() {}

    public var isEmpty: Bool {
        runs.isEmpty && slugs.isEmpty && history.isEmpty && !gate && arrivalHours.isEmpty && alerts.isEmpty
            && widgets.isEmpty
    }
}
