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
    /// How long the run's longest-queued job had waited for a runner when its `queued` crossing
    /// was noticed (`RunState.queuedAlertAt`); nil before. A rule's `queued_after` is read against it.
    public var queuedFor: UnixTime?

    public init(
        repository: String, workflow: String?, branch: String?, defaultBranch: String?, event: String?, actor: String?,
        origin: RunOrigin = .base, queuedFor: UnixTime? = nil
    ) {
        self.queuedFor = queuedFor
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
            actor: state.person, origin: state.origin,
            queuedFor: state.queuedAlertAt.flatMap { at in
                RunnerWaitBook.longestQueued(state)?.createdAt.map { at - $0 }
            })
    }
}
