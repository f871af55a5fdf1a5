/// Everything the bridge knows of one run attempt, built only from deliveries (and from history
/// captured when the run was first seen).
///
/// Every field that comes from GitHub is merged order-independently: the furthest-along run
/// snapshot, the furthest-along snapshot of each job, metadata from the earliest job. So the same
/// deliveries in any order, with any duplicates, give the same state. The bookkeeping times
/// (`firstSeenAt`, `lastChangeAt`, `completion.recognizedAt`) are arrival facts and drive timers only.
public struct RunState: Sendable, Equatable, Codable {
    public var key: RunKey
    public var repository: Repository
    /// The furthest-along `workflow_run` snapshot of this attempt; nil until one arrives.
    public var run: WorkflowRun?
    /// By job id. Check-run jobs are kept (so a late duplicate is recognised) but never drawn.
    public var jobs: [Int: JobRecord]
    /// Workflow name, branch and commit as the earliest job (lowest id) reported them, for runs
    /// whose `workflow_run` delivery has not arrived (or never will).
    public var jobMetadata: JobMetadata?
    /// The finished run this one's shape was seeded from, and each step's expected duration,
    /// captured once so that history written while this run is going does not reshape it.
    public var seed: RunSummary?
    public var estimates: [String: Double]
    /// True once history was consulted; with legacy payloads that lack a workflow name it waits for one.
    public var historyResolved: Bool
    /// The steps of the previous attempt, for a re-run of failed jobs; empty on attempt 1.
    public var inherited: [InheritedGroup]
    /// When the attempt before this one failed: the names of its jobs that failed (empty when no
    /// job delivery named them). Nil on attempt 1 and after an attempt that did not fail.
    public var failedBefore: [String]?
    public var firstSeenAt: UnixTime
    /// When a delivery last changed this state: the completion grace period counts from here.
    public var lastChangeAt: UnixTime
    /// Set once the run is known to be over.
    public var completion: RunCompletion?
    /// The level the push budget gave the run when it took its card, or why it got none; nil when
    /// the configured level applied (no budget in play).
    public var cardDecision: CardDecision?
    /// Requests PushWard acknowledged for this run's card (POST and PATCH): what the run cost.
    /// Nil before the first.
    public var updatesSpent: Int?
    /// What became of the last button pressed for this run (`actions`): the card says it until a
    /// delivery changes the run again.
    public var actionNote: ActionNote?
    /// Whether the run holds one of its person's ongoing cards, is counted on the summary card,
    /// or was preempted, and since when (`SlotPlanner`); nil until first planned.
    public var placement: CardPlacement?
    /// The job the card last said waits for a runner (`activity.runner_wait`), noticed by the
    /// engine's timer; kept after the job started, so `runs show` says what the run waited for.
    public var runnerWait: RunnerWait?
    /// When a job of the run was first seen queued past the shortest `queued_after` of the alert
    /// rules covering it: the `queued` alert's crossing, noticed once per attempt.
    public var queuedAlertAt: UnixTime?

    public init(key: RunKey, repository: Repository, at now: UnixTime) {
        self.key = key
        self.repository = repository
        self.run = nil
        self.jobs = [:]
        self.jobMetadata = nil
        self.seed = nil
        self.estimates = [:]
        self.historyResolved = false
        self.inherited = []
        self.firstSeenAt = now
        self.lastChangeAt = now
        self.completion = nil
    }

    /// The workflow's name: from the run, else from a job, else the workflow file path.
    public var workflowName: String? {
        if let name = run?.name, !name.isEmpty { return name }
        if let name = jobMetadata?.workflowName, !name.isEmpty { return name }
        if let path = run?.path, !path.isEmpty { return path }
        return nil
    }

    public var headBranch: String? { run?.headBranch ?? jobMetadata?.headBranch }
    /// The GitHub login the run is for: who started this attempt, else whose push or pull request
    /// started the run, else who sent its first job delivery (a job can arrive before the run).
    public var person: String? { run?.triggeringActor ?? run?.actor ?? jobMetadata?.sender }
    public var headSHA: String? { run?.headSHA ?? jobMetadata?.headSHA }

    /// Whether the run's commit is the repository's own, a fork's, or not known yet.
    public var origin: RunOrigin { RunOrigin.of(run, repository: key.repository) }

    /// Whether GitHub holds the run for a maintainer's approval and no job of it has run: the
    /// latest `workflow_run` says `action_required` and no job delivery came.
    public var isHeldForApproval: Bool { run?.isHeldForApproval == true && jobs.isEmpty }

    /// Whether this attempt succeeded after the one before it failed: flaky, not simply green.
    public var passedOnRerun: Bool {
        key.attempt > 1 && failedBefore != nil && completion?.conclusion == "success" && !allJobsSkipped
    }

    /// Whether the run had jobs and every one of them was skipped (GitHub still concludes it
    /// `success`).
    public var allJobsSkipped: Bool {
        let jobs = workflowJobs
        return !jobs.isEmpty && jobs.allSatisfy { $0.isFinished && $0.conclusion == "skipped" }
    }

    /// The branch as history and alert replacement know it: a fork's is `owner/name:branch`
    /// (GitHub's own notation for a pull request's head; no branch name holds a `:`), so a fork's
    /// `main` never answers for the repository's `main`. Nil while the origin is unknown: such a
    /// run lends its outcome to no branch's "fixed".
    public var historyBranch: String? {
        switch origin {
        case .base: headBranch
        case .fork(let head): headBranch.map { "\(head):\($0)" }
        case .unknown: nil
        }
    }

    /// The repository's page: the payload's, else built from `full_name`, each part encoded.
    public var repositoryURL: String {
        repository.htmlURL ?? "https://github.com/" + PercentEncoding.path(repository.fullName)
    }

    /// The run's page on GitHub; for a later attempt, that attempt's page.
    public var runURL: String {
        let base = run?.htmlURL ?? repositoryURL + "/actions/runs/\(key.runID)"
        return key.attempt > 1 ? base + "/attempts/\(key.attempt)" : base
    }

    /// The pull request of the run when there is one, else the commit; nil when neither is known.
    /// `head_sha` is whatever the payload says, so it goes into the URL as one encoded segment.
    public var secondaryURL: (url: String, title: String)? {
        if let pullRequest = run?.pullRequests.first {
            return (pullRequest.htmlURL ?? repositoryURL + "/pull/\(pullRequest.number)", "PR #\(pullRequest.number)")
        }
        if let sha = headSHA, !sha.isEmpty {
            return (repositoryURL + "/commit/" + PercentEncoding.pathSegment(sha), "Commit")
        }
        return nil
    }

    /// The action note the card shows now: none once a delivery changed the run after it.
    public var currentActionNote: ActionNote? {
        actionNote.flatMap { $0.at >= lastChangeAt ? $0 : nil }
    }

    /// When this attempt started, for choosing the newest run of a slug.
    public var attemptStartedAt: UnixTime {
        run?.runStartedAt ?? jobs.values.compactMap(\.createdAt).min() ?? run?.createdAt ?? firstSeenAt
    }

    /// The jobs that are steps of the workflow, by id (GitHub's creation order).
    public var workflowJobs: [JobRecord] {
        jobs.values.filter { !$0.isCheckRun }.sorted { $0.id < $1.id }
    }

    /// Applies one `workflow_run` snapshot; returns whether anything changed.
    @discardableResult
    public mutating func apply(_ snapshot: WorkflowRun) -> Bool {
        let merged = run.map { Self.furtherAlong($0, snapshot) } ?? snapshot
        guard merged != run else { return false }
        run = merged
        return true
    }

    /// Applies one `workflow_job` delivery; returns whether anything changed.
    @discardableResult
    public mutating func apply(_ event: WorkflowJobEvent) -> Bool {
        let incoming = JobRecord(event)
        let merged = jobs[incoming.id].map { $0.merged(with: incoming) } ?? incoming
        var changed = merged != jobs[incoming.id]
        jobs[incoming.id] = merged
        let metadata = JobMetadata(
            sourceJobID: event.job.id, workflowName: event.job.workflowName, headBranch: event.job.headBranch,
            headSHA: event.job.headSHA, sender: event.sender)
        if jobMetadata.map({ metadata.sourceJobID < $0.sourceJobID }) ?? true {
            changed = changed || jobMetadata != metadata
            jobMetadata = metadata
        }
        return changed
    }

    /// Of two snapshots of the same run, the one further along: status, then update time, then the
    /// conclusion, so two different snapshots never tie. A snapshot of the run held for approval
    /// is `completed` but not the end: the approval sends the run again as queued or in progress,
    /// later, so beside a held snapshot the newer one wins (the other one on a tie).
    static func furtherAlong(_ lhs: WorkflowRun, _ rhs: WorkflowRun) -> WorkflowRun {
        if lhs.isHeldForApproval != rhs.isHeldForApproval {
            let held = lhs.isHeldForApproval ? lhs : rhs
            let other = lhs.isHeldForApproval ? rhs : lhs
            return (held.updatedAt ?? -1) > (other.updatedAt ?? -1) ? held : other
        }
        func key(_ run: WorkflowRun) -> (Int, Double, String, Int) {
            (run.status.rank, run.updatedAt ?? -1, run.conclusion ?? "", run.pullRequests.count)
        }
        return key(rhs) > key(lhs) ? rhs : lhs
    }
}

/// What the card says after a button was pressed: "Re-run requested by mona", or why GitHub
/// refused it. Shown while no delivery changed the run since (`at >= lastChangeAt`), so GitHub's
/// own deliveries move the card on.
public struct ActionNote: Sendable, Equatable, Codable {
    public var kind: ActionKind
    public var text: String
    public var failed: Bool
    public var at: UnixTime

    public init(kind: ActionKind, text: String, failed: Bool, at: UnixTime) {
        self.kind = kind
        self.text = text
        self.failed = failed
        self.at = at
    }
}

/// Workflow name, branch and commit from a job payload (which may lack all three).
public struct JobMetadata: Sendable, Equatable, Codable {
    public var sourceJobID: Int
    public var workflowName: String?
    public var headBranch: String?
    public var headSHA: String?
    /// The delivery's `sender.login`.
    public var sender: String?
}

/// How and when the bridge learned that a run is over.
public struct RunCompletion: Sendable, Equatable, Codable {
    public enum Source: String, Sendable, Codable {
        /// The run's `completed` delivery (or a `requested` one that is already complete).
        case runEvent
        /// Every job finished and nothing arrived for the grace period: the `completed` delivery
        /// was lost, so the conclusion is inferred from the jobs.
        case inferred
    }

    public var conclusion: String
    public var recognizedAt: UnixTime
    public var source: Source

    public init(conclusion: String, recognizedAt: UnixTime, source: Source) {
        self.conclusion = conclusion
        self.recognizedAt = recognizedAt
        self.source = source
    }
}

/// A step of the previous attempt, carried into a re-run.
public struct InheritedGroup: Sendable, Equatable, Codable {
    public var name: String
    /// The id of the group's first job in the earlier attempt: keeps the step where it was.
    public var orderKey: Int
    public var jobCount: Int
    /// True when all its jobs succeeded (or were skipped): "re-run failed jobs" leaves it alone,
    /// so it is drawn complete unless this attempt runs it again.
    public var succeeded: Bool

    public init(name: String, orderKey: Int, jobCount: Int, succeeded: Bool) {
        self.name = name
        self.orderKey = orderKey
        self.jobCount = jobCount
        self.succeeded = succeeded
    }
}
