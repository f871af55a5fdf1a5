/// One step of the card: the jobs of a run that share a base name (a matrix, a fan-out of
/// reusable-workflow callers, or a single job), or a step known only from history so far.
public struct StepGroup: Sendable, Equatable {
    public enum Origin: String, Sendable {
        /// At least one job of this attempt belongs to it.
        case live
        /// Known from the run the shape was seeded from; its jobs are not created yet.
        case seeded
        /// From the previous attempt, not re-run (yet) in this one.
        case inherited
    }

    /// The base name (see `JobGroupName`); several steps beyond the 64th share the last one.
    public var name: String
    public var origin: Origin
    /// This attempt's jobs of the step, by id.
    public var jobs: [JobRecord]
    /// How many parallel jobs the step has or is expected to have (never 0).
    public var expectedJobCount: Int
    /// True for an inherited step whose jobs all succeeded in the earlier attempt.
    public var completedEarlier: Bool
    /// Expected seconds, from history; nil when this step was never timed.
    public var estimate: Double?
    /// Where the step sits: its first job's id (GitHub creates jobs in workflow order).
    public var orderKey: Int

    public init(
        name: String, origin: Origin, jobs: [JobRecord], expectedJobCount: Int, completedEarlier: Bool = false,
        estimate: Double? = nil, orderKey: Int
    ) {
        self.name = name
        self.origin = origin
        self.jobs = jobs
        self.expectedJobCount = expectedJobCount
        self.completedEarlier = completedEarlier
        self.estimate = estimate
        self.orderKey = orderKey
    }

    /// The number of rows the card draws for it: its jobs, between 1 and 10.
    public var rows: Int { min(10, max(1, jobs.isEmpty ? expectedJobCount : jobs.count)) }

    /// Finished: every job of this attempt finished, or untouched by this attempt and complete in
    /// the earlier one.
    public var isFinished: Bool {
        jobs.isEmpty ? completedEarlier : jobs.allSatisfy(\.isFinished)
    }

    public var isRunning: Bool { jobs.contains(where: \.isRunning) }
    public var hasFailure: Bool { jobs.contains(where: \.failed) }
    /// The environment a job of this step waits for approval of, when one does and none runs.
    public var waitingEnvironment: String? {
        guard !isRunning else { return nil }
        return jobs.first(where: \.isWaiting)?.waitingEnvironment
    }

    /// Jobs that count as done toward the run's progress.
    public var finishedJobCount: Int {
        jobs.isEmpty ? (completedEarlier ? expectedJobCount : 0) : jobs.filter(\.isFinished).count
    }

    /// Jobs the step is expected to have in all, for the run's progress.
    public var totalJobCount: Int { jobs.isEmpty ? expectedJobCount : jobs.count }

    /// When the step began: its first job start; nil before any started.
    public var startedAt: UnixTime? { jobs.compactMap(\.startedAt).min() }
}
