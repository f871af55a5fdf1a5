/// The fields of a `workflow_job` object the bridge uses. Optional where recorded payloads lack them.
public struct WorkflowJob: Sendable, Equatable {
    public var id: Int
    public var runID: Int
    /// 1 when the payload does not say (2021-era payloads have no `run_attempt`).
    public var runAttempt: Int
    public var name: String
    public var workflowName: String?
    public var headBranch: String?
    public var headSHA: String?
    public var status: JobStatus
    /// `success`, `failure`, `cancelled`, `skipped`, … once completed; nil before.
    public var conclusion: String?
    public var createdAt: UnixTime?
    public var startedAt: UnixTime?
    public var completedAt: UnixTime?
    public var steps: [JobStep]
    public var labels: [String]
    public var runnerName: String?
    public var htmlURL: String?

    public init(
        id: Int, runID: Int, runAttempt: Int = 1, name: String, workflowName: String? = nil,
        headBranch: String? = nil, headSHA: String? = nil, status: JobStatus, conclusion: String? = nil,
        createdAt: UnixTime? = nil, startedAt: UnixTime? = nil, completedAt: UnixTime? = nil,
        steps: [JobStep] = [], labels: [String] = [], runnerName: String? = nil, htmlURL: String? = nil
    ) {
        self.id = id
        self.runID = runID
        self.runAttempt = runAttempt
        self.name = name
        self.workflowName = workflowName
        self.headBranch = headBranch
        self.headSHA = headSHA
        self.status = status
        self.conclusion = conclusion
        self.createdAt = createdAt
        self.startedAt = startedAt
        self.completedAt = completedAt
        self.steps = steps
        self.labels = labels
        self.runnerName = runnerName
        self.htmlURL = htmlURL
    }
}

/// `workflow_job.status`, ranked so that a job only ever moves forward:
/// `queued`/`waiting` → `in_progress` → `completed`.
public enum JobStatus: String, Sendable, Hashable, Comparable, Codable {
    case queued
    case waiting
    case inProgress = "in_progress"
    case completed

    public var rank: Int {
        switch self {
        case .queued, .waiting: 0
        case .inProgress: 1
        case .completed: 2
        }
    }

    public static func < (lhs: JobStatus, rhs: JobStatus) -> Bool { lhs.rank < rhs.rank }
}

/// One entry of a job's `steps[]`, a snapshot taken when the event was sent.
public struct JobStep: Sendable, Equatable {
    /// As the sender numbers it (GitHub from 1, Gitea from 0); nil when it sent none the decoder
    /// could read. Only the JSON dump shows it.
    public var number: Int?
    public var name: String
    public var status: JobStatus
    public var conclusion: String?
    public var startedAt: UnixTime?
    public var completedAt: UnixTime?

    public init(
        number: Int?, name: String, status: JobStatus, conclusion: String? = nil, startedAt: UnixTime? = nil,
        completedAt: UnixTime? = nil
    ) {
        self.number = number
        self.name = name
        self.status = status
        self.conclusion = conclusion
        self.startedAt = startedAt
        self.completedAt = completedAt
    }
}
