/// Seconds since the Unix epoch. Every time the core handles is one of these, passed in: the core
/// never reads a clock.
public typealias UnixTime = Double

/// One decoded GitHub webhook delivery body, by `X-GitHub-Event`.
///
/// An event the bridge does not handle is a value, not an error: it is recorded as ignored with
/// the event name as the reason.
public enum WebhookEvent: Sendable, Equatable {
    case workflowRun(WorkflowRunEvent)
    case workflowJob(WorkflowJobEvent)
    case ping(PingEvent)
    case unsupported(event: String)
}

/// `workflow_run`: a run was requested, started or completed.
public struct WorkflowRunEvent: Sendable, Equatable {
    public var action: String
    public var run: WorkflowRun
    public var repository: Repository
    /// `sender.login`: who caused this delivery.
    public var sender: String?

    public init(action: String, run: WorkflowRun, repository: Repository, sender: String? = nil) {
        self.action = action
        self.run = run
        self.repository = repository
        self.sender = sender
    }
}

/// `workflow_job`: a job was queued, is waiting for an environment approval, started or completed.
public struct WorkflowJobEvent: Sendable, Equatable {
    public var action: String
    public var job: WorkflowJob
    public var repository: Repository
    /// The environment a `waiting` job waits for (`deployment.environment`); nil otherwise.
    public var deploymentEnvironment: String?
    /// `sender.login`: who caused this delivery; for a job, the person the run is for when no
    /// `workflow_run` delivery has said so yet.
    public var sender: String?

    public init(
        action: String, job: WorkflowJob, repository: Repository, deploymentEnvironment: String? = nil,
        sender: String? = nil
    ) {
        self.action = action
        self.job = job
        self.repository = repository
        self.deploymentEnvironment = deploymentEnvironment
        self.sender = sender
    }
}

/// `ping`: sent once when a hook is created. `events` tells whether the hook subscribes to what we need.
public struct PingEvent: Sendable, Equatable {
    public var zen: String?
    public var hookID: Int?
    /// The events the hook sends (`["*"]` for all); empty when the payload does not say.
    public var events: [String]
    /// `json` or `form`, from `hook.config.content_type`.
    public var contentType: String?
    public var repository: Repository?

    public init(zen: String?, hookID: Int?, events: [String], contentType: String?, repository: Repository?) {
        self.zen = zen
        self.hookID = hookID
        self.events = events
        self.contentType = contentType
        self.repository = repository
    }
}

public struct Repository: Sendable, Hashable, Codable {
    /// `owner/name`.
    public var fullName: String
    /// `https://github.com/owner/name`; nil in some legacy payloads.
    public var htmlURL: String?
    /// `repository.default_branch`: what alert rules mean by "the default branch"; nil when the
    /// payload does not say.
    public var defaultBranch: String?

    public init(fullName: String, htmlURL: String?, defaultBranch: String? = nil) {
        self.fullName = fullName
        self.htmlURL = htmlURL
        self.defaultBranch = defaultBranch
    }

    /// The part after the owner: `webhook-testing` for `foo/webhook-testing`.
    public var name: String {
        fullName.split(separator: "/", maxSplits: 1).last.map(String.init) ?? fullName
    }
}
