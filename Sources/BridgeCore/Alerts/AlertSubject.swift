/// What alert rules look at in a run.
public struct AlertSubject: Sendable, Equatable {
    public var repository: String
    public var workflow: String?
    public var branch: String?
    public var defaultBranch: String?
    public var event: String?
    /// The person the run is for: `triggering_actor`, else `actor`.
    public var actor: String?
    /// Whose commit runs: a fork's run is covered only by rules that say `"forks": true`.
    public var origin: RunOrigin

    public init(
        repository: String, workflow: String?, branch: String?, defaultBranch: String?, event: String?, actor: String?,
        origin: RunOrigin = .base
    ) {
        self.repository = repository
        self.workflow = workflow
        self.branch = branch
        self.defaultBranch = defaultBranch
        self.event = event
        self.actor = actor
        self.origin = origin
    }

    public init(_ state: RunState) {
        self.init(
            repository: state.key.repository, workflow: state.workflowName, branch: state.headBranch,
            defaultBranch: state.repository.defaultBranch, event: state.run?.event,
            actor: state.person, origin: state.origin)
    }
}
