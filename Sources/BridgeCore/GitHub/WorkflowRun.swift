/// The fields of a `workflow_run` object the bridge uses. Optional where recorded payloads lack them.
public struct WorkflowRun: Sendable, Equatable, Codable {
    public var id: Int
    /// 1 when the payload does not say (payloads from before re-runs existed).
    public var runAttempt: Int
    public var runNumber: Int?
    public var workflowID: Int?
    /// The workflow's name; empty in some payloads, where `displayTitle` or `path` stand in.
    public var name: String?
    public var displayTitle: String?
    public var path: String?
    public var headBranch: String?
    public var headSHA: String?
    /// What triggered the run: `push`, `pull_request`, `dynamic`, …
    public var event: String?
    public var status: RunStatus
    public var conclusion: String?
    public var htmlURL: String?
    public var runStartedAt: UnixTime?
    public var createdAt: UnixTime?
    public var updatedAt: UnixTime?
    public var pullRequests: [PullRequestReference]
    /// `actor.login`: whose push or pull request started the run.
    public var actor: String?
    /// `triggering_actor.login`: who started this attempt (differs from `actor` on a re-run).
    public var triggeringActor: String?
    /// The first line of `head_commit.message`.
    public var commitTitle: String?
    /// `head_repository.full_name`: where the run's commit comes from. Another repository than the
    /// run's own is a fork (`RunState.origin`), whose author chose the branch name and, for a
    /// `pull_request` run, the workflow file. Nil when the payload does not say (the fork was
    /// deleted, or a sender that has no such field).
    public var headRepository: String?
    /// `head_repository.id`, kept beside the name for the JSON dump and `explain`.
    public var headRepositoryID: Int?

    /// GitHub holds the run until a maintainer approves it (a first-time contributor's pull
    /// request from a fork): it is sent as `completed` with the conclusion `action_required`, no
    /// job has run, and approving it sends the same run again as queued or in progress.
    public var isHeldForApproval: Bool { status == .completed && conclusion == "action_required" }

    public init(
        id: Int, runAttempt: Int = 1, runNumber: Int? = nil, workflowID: Int? = nil, name: String? = nil,
        displayTitle: String? = nil, path: String? = nil, headBranch: String? = nil, headSHA: String? = nil,
        event: String? = nil, status: RunStatus = .queued, conclusion: String? = nil, htmlURL: String? = nil,
        runStartedAt: UnixTime? = nil, createdAt: UnixTime? = nil, updatedAt: UnixTime? = nil,
        pullRequests: [PullRequestReference] = [], actor: String? = nil, triggeringActor: String? = nil,
        commitTitle: String? = nil, headRepository: String? = nil, headRepositoryID: Int? = nil
    ) {
        self.id = id
        self.runAttempt = runAttempt
        self.runNumber = runNumber
        self.workflowID = workflowID
        self.name = name
        self.displayTitle = displayTitle
        self.path = path
        self.headBranch = headBranch
        self.headSHA = headSHA
        self.event = event
        self.status = status
        self.conclusion = conclusion
        self.htmlURL = htmlURL
        self.runStartedAt = runStartedAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.pullRequests = pullRequests
        self.actor = actor
        self.triggeringActor = triggeringActor
        self.commitTitle = commitTitle
        self.headRepository = headRepository
        self.headRepositoryID = headRepositoryID
    }
}

/// `workflow_run.status`, ranked so that a run only ever moves forward.
public enum RunStatus: String, Sendable, Hashable, Comparable, Codable {
    case requested, queued, waiting, pending
    case inProgress = "in_progress"
    case completed

    /// Anything before `in_progress` ranks 0: GitHub sends these in no reliable order.
    public var rank: Int {
        switch self {
        case .requested, .queued, .waiting, .pending: 0
        case .inProgress: 1
        case .completed: 2
        }
    }

    public static func < (lhs: RunStatus, rhs: RunStatus) -> Bool { lhs.rank < rhs.rank }
}

/// A pull request a run belongs to (`pull_requests[]`).
public struct PullRequestReference: Sendable, Hashable, Codable {
    public var number: Int
    /// The web page of the pull request, when it can be built from the payload.
    public var htmlURL: String?

    public init(number: Int, htmlURL: String? = nil) {
        self.number = number
        self.htmlURL = htmlURL
    }
}
