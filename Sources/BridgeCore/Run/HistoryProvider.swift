/// Where the engine reads what it no longer holds in memory: the finished runs of a workflow that
/// shape a new run, and runs and cards it let go of.
///
/// The core stays free of I/O: it is handed a provider with each delivery rather than a database.
/// The daemon backs it with SQLite (each lookup one indexed read); `render` with the runs it has
/// played (`RunHistory`). The engine keeps what it read in a bounded cache (`HistoryCache`), so
/// memory follows the work in flight, not the history stored.
public protocol HistoryProvider {
    /// `Never` for a provider in memory, so the engine's calls need no `try` there.
    associatedtype Failure: Error

    /// The newest `RunHistory.runsKeptPerWorkflow` finished runs of `workflow` in `repository`,
    /// any branch, ordered by (finish time, key) as `RunHistory` keeps them.
    func finishedRuns(repository: String, workflow: String) throws(Failure) -> [RunSummary]

    /// A run the engine holds no longer (forgotten after it finished, or never loaded at start):
    /// its state, its card and whether it is done with the card. Nil when it was never stored.
    func storedRun(_ key: RunKey) throws(Failure) -> StoredRunState?

    /// The highest attempt of `runID` below `attempt` that was stored: what a re-run inherits.
    func latestAttempt(repository: String, runID: Int, below attempt: Int) throws(Failure) -> RunState?

    /// A card the engine holds no longer (ended and idle): how it stood when last written.
    func storedSession(slug: String) throws(Failure) -> StoredSessionState?

    /// The newest finished attempt of `workflow` on `branch` other than `key`, finished by
    /// `before`, whose conclusion is decisive (`AlertReason.isDecisive`): whether a success fixed
    /// something. Only its finish time and conclusion are read.
    func lastDecisiveRun(
        repository: String, workflow: String, branch: String, before: UnixTime, excluding key: RunKey
    ) throws(Failure) -> (finishedAt: UnixTime, conclusion: String)?
}

/// A run as storage keeps it, for `HistoryProvider.storedRun`.
public struct StoredRunState: Sendable, Equatable {
    public var state: RunState
    public var slug: String
    public var released: Bool

    public init(state: RunState, slug: String, released: Bool) {
        self.state = state
        self.slug = slug
        self.released = released
    }
}

/// A card as storage keeps it, for `HistoryProvider.storedSession`.
public struct StoredSessionState: Sendable, Equatable {
    public var session: ActivitySession
    public var floor: ProgressFloor?

    public init(session: ActivitySession, floor: ProgressFloor?) {
        self.session = session
        self.floor = floor
    }
}
