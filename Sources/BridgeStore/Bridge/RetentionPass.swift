import BridgeCore

/// One retention pass over the database, done in batches: what it removed so far (for the log
/// line that closes it) and where the step-history scan stands between batches and passes.
///
/// The scan's cursor is what keeps batches cheap: most old step history is kept (the last runs of
/// every branch), and walking those rows again on every batch would cost more with every quiet
/// branch. The cursor moves forward through the finished runs by age; a run behind it that was kept
/// is looked at again only when the scan starts over, once every `stepHistoryRescanInterval`, since
/// it only becomes prunable when newer runs of its branch finish.
public struct RetentionPass: Sendable, Equatable {
    /// Raw payloads dropped (rows kept), as `github.payload_retention` says.
    public var payloads = 0
    /// Delivery rows removed.
    public var deliveries = 0
    /// Finished runs removed, each with its jobs and pushes.
    public var runs = 0
    /// Ended cards removed.
    public var activities = 0
    /// Finished runs whose step history was removed.
    public var stepHistoryRuns = 0
    /// Redelivery requests forgotten (`recovery_requests`, a week after the last).
    public var recoveryRequests = 0
    /// Button tokens removed a day after they expired (`action_tokens`).
    public var actionTokens = 0
    /// Audit rows of presses removed with the runs' retention (`actions`).
    public var actions = 0
    /// Free pages given back to the file system by `incremental_vacuum`.
    public var pagesReleased = 0

    /// The last finished run the step-history scan looked at: its `finished_at` and its first
    /// step's rowid. Nil: the scan starts from the oldest.
    public var stepHistoryCursor: StepHistoryCursor?
    /// When the scan last started from the oldest run; nil before the first pass.
    public var stepHistoryScanStartedAt: UnixTime?
    /// Whether the scan's last batch found fewer runs than it could take: it is at the cutoff,
    /// and only runs that age past it from now on are new to it.
    public var stepHistoryCaughtUp = false

    /// How often the step-history scan starts over from the oldest run: runs kept because they were
    /// among their branch's last ones are looked at again this often. A day: retention counts in
    /// days, so a run pruned up to a day late changes nothing, and a database with a few thousand
    /// quiet branches is not walked every ten minutes.
    public static let stepHistoryRescanInterval: UnixTime = 86_400

    public init() {}

    /// Whether the pass removed (or gave back) anything.
    public var removedAnything: Bool {
        payloads + deliveries + runs + activities + stepHistoryRuns + recoveryRequests + actionTokens + actions
            + pagesReleased > 0
    }

    /// Clears the counts for the next pass, keeping where the step-history scan stands.
    public mutating func startNext() {
        let cursor = stepHistoryCursor
        let startedAt = stepHistoryScanStartedAt
        let caughtUp = stepHistoryCaughtUp
        self = RetentionPass()
        stepHistoryCursor = cursor
        stepHistoryScanStartedAt = startedAt
        stepHistoryCaughtUp = caughtUp
    }

    /// A position in the step-history scan: runs are visited by `finished_at`, then by rowid
    /// on SQLite and by key on PostgreSQL.
    public struct StepHistoryCursor: Sendable, Equatable {
        public var finishedAt: UnixTime
        public var rowID: Int64
        /// The run at the position: PostgreSQL's tie-break.
        public var key: RunKey?

        public init(finishedAt: UnixTime, rowID: Int64, key: RunKey? = nil) {
            self.finishedAt = finishedAt
            self.rowID = rowID
            self.key = key
        }
    }
}
