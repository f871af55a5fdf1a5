import BridgeCore

/// A run as storage holds it, for `runs list/show` and the engine's restart.
public struct StoredRun: Sendable, Equatable {
    public var state: RunState
    public var slug: String
    public var released: Bool
    public var updatedAt: UnixTime

    public init(state: RunState, slug: String, released: Bool, updatedAt: UnixTime) {
        self.state = state
        self.slug = slug
        self.released = released
        self.updatedAt = updatedAt
    }

    /// `queued`, `in_progress` or `completed`, as a person reads it.
    public var status: String {
        if state.completion != nil { return "completed" }
        return StepPlanner.plan(for: state).hasStarted ? "in_progress" : "queued"
    }
}

/// A card as storage holds it.
public struct StoredCard: Sendable, Equatable {
    public var session: ActivitySession
    public var floor: ProgressFloor?
    /// What the core wanted shown when the card was last written.
    public var desired: JSONValue?
    public var updatedAt: UnixTime

    public init(session: ActivitySession, floor: ProgressFloor?, desired: JSONValue?, updatedAt: UnixTime) {
        self.session = session
        self.floor = floor
        self.desired = desired
        self.updatedAt = updatedAt
    }
}
