/// The steps of one run attempt in display order, with the contract's limits already applied:
/// at most 64 steps, each row count 1–10.
public struct StepPlan: Sendable, Equatable {
    /// PushWard accepts 1–64 steps.
    public static let maximumSteps = 64

    public var groups: [StepGroup]

    public init(groups: [StepGroup]) {
        self.groups = groups
    }

    /// Never 0: a run with no known jobs yet is drawn as one pending step.
    public var totalSteps: Int { max(1, groups.count) }

    /// True once any job of this attempt started (or finished); before that the card shows step 0.
    public var hasStarted: Bool {
        groups.contains { $0.jobs.contains { $0.status.rank >= JobStatus.inProgress.rank } }
    }

    /// The 1-based step the card points at: 0 before any job starts; then the first step with a
    /// running job; else the first unfinished one; else the last.
    public var currentStep: Int {
        guard hasStarted else { return 0 }
        if let running = groups.firstIndex(where: \.isRunning) { return running + 1 }
        if let unfinished = groups.firstIndex(where: { !$0.isFinished }) { return unfinished + 1 }
        return totalSteps
    }

    /// The current step's group; nil at step 0.
    public var currentGroup: StepGroup? {
        let step = currentStep
        return step >= 1 && step <= groups.count ? groups[step - 1] : nil
    }

    /// Completed jobs over expected jobs, for the whole run while it goes (the end frame shows 1).
    ///
    /// While every known job finished, more jobs are coming (GitHub creates `needs:` jobs late, and
    /// without history nothing says how many): one more is counted, so the bar does not claim
    /// 100 % and then have to stand still until the run ends.
    public var liveJobFraction: Double {
        let finished = groups.reduce(0) { $0 + $1.finishedJobCount }
        var total = groups.reduce(0) { $0 + $1.totalJobCount }
        if finished == total { total += 1 }
        return Double(finished) / Double(total)
    }

    /// The first step that failed, for the end frame of a failed run.
    public var firstFailedGroup: StepGroup? { groups.first(where: \.hasFailure) }
}
