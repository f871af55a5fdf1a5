/// Where a run's card and alerts go.
public enum Route: Sendable, Equatable {
    /// Everyone the key reaches: no `target`.
    case everyone
    /// Nobody: the run gets no card and no alert.
    case nobody
    /// The people `target` names; `person` is the mapped login when a member is among them, and
    /// gives the run a card of that person's own.
    case target(ActivityTarget, person: String?)

    public var target: ActivityTarget? {
        if case .target(let target, _) = self { return target }
        return nil
    }

    public var person: String? {
        if case .target(_, let person) = self { return person }
        return nil
    }
}
