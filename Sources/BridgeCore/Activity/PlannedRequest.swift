/// A request the reconciler wants sent, and what it means for the activity's lifecycle once
/// PushWard acknowledges it.
public struct PlannedRequest: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// `POST /activities` for a run that just took the card.
        case create
        /// The run's first PATCH: every field the bridge uses set or nulled, `state: ongoing`.
        case firstFrame
        /// A diff while the run goes.
        case update
        /// The end frame: last step, full progress, the conclusion's words and colour.
        case finalFrame
        /// `state: ended`, after the end frame has shown for `end_display_time`.
        case end
        /// Keeps a long quiet run from going stale on the server.
        case heartbeat
        /// Content that late deliveries changed after the card ended; the state stays `ended`.
        case correction
        /// `DELETE`: the account nears PushWard's 50 (`AccountRoom`), or a create needs its room on the
        /// account. Costs no update, but it is a request like any other.
        case delete
    }

    public var request: PushWardRequest
    public var kind: Kind
    /// The run the request is for.
    public var run: RunKey
    /// The step the card shows once PushWard takes it, for a template whose content does not say
    /// (generic); nil otherwise.
    public var step: Int?

    public init(request: PushWardRequest, kind: Kind, run: RunKey, step: Int? = nil) {
        self.request = request
        self.kind = kind
        self.run = run
        self.step = step
    }
}

/// What the reconciler says to do next for one activity.
public enum ReconcileDecision: Sendable, Equatable {
    case send(PlannedRequest)
    /// Nothing to send before this time (throttle window, end display time, heartbeat).
    case wait(until: UnixTime)
    /// A visible change is held back until this time (or until something more urgent comes),
    /// to spend fewer of PushWard's paid updates; `reason` says why, for `explain`.
    case hold(until: UnixTime, reason: HoldReason)
    /// Nothing to send until something changes.
    case idle

    /// The time to look again, for a wait or a hold.
    public var dueAt: UnixTime? {
        switch self {
        case .wait(let until), .hold(let until, _): until
        case .send, .idle: nil
        }
    }
}

/// Why a change the card does not show yet was not pushed.
public enum HoldReason: String, Sendable, Equatable, Codable {
    /// Not a step change, a first failure or an end: it waits `coalesce` to merge with what follows.
    case coalescing
    /// A step change waits the settle window for what usually follows it at once.
    case settling
    /// The run's level does not push this kind of change; it rides along with the next update.
    case belowLevel
    /// The card used its requests of the rolling hour; two stay kept for the end frame and the end.
    case hourlyCap
}
