/// How much of a run's life a card shows, and so how many of PushWard's paid updates it spends.
///
/// Every level ends on the same end frame; what differs is what goes out on the way. Counts and
/// progress inside a step that a level does not push ride along with the next update it does
/// send, so nothing shown is ever wrong, only later.
public enum Fidelity: String, Sendable, Equatable, CaseIterable, Codable {
    /// The monthly budget decides, run by run (the richest level whose expected cost fits);
    /// `full` while the account has no limit.
    case auto
    /// Every visible change, coalesced: a change that is not a step change, a first failure or
    /// an end waits `coalesce` and merges with what follows.
    case full
    /// The first frame, each step change (with its live window), the first failure, the end
    /// frame and the end.
    case steps
    /// The first frame, the first failure, the end frame and the end: at most five updates a run
    /// whatever its number of steps.
    case milestones

    /// The levels a run can be drawn at, richest first.
    public static let concrete: [Fidelity] = [.full, .steps, .milestones]

    /// Whether this level pushes a change of the current step as it happens.
    var pushesStepChanges: Bool { self == .full || self == .steps || self == .auto }
    /// Whether this level pushes changes inside a step (counts, progress, the headline).
    var pushesMinorChanges: Bool { self == .full || self == .auto }
}
