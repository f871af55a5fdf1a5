/// How much a run needs one of its person's five ongoing cards, highest last: what the bridge
/// ranks runs by when more are live than PushWard lets a person see at once.
///
/// The order is what an operator watching an organisation-wide hook needs on the phone: a run
/// that is failing (from its first failed job until its end frame), then one that waits for
/// someone's approval, then one on the repository's default branch, then any other. Within a
/// class the newest run goes first (`SlotPlanner`).
public enum SlotRank: Int, Sendable, Comparable, Codable, CaseIterable {
    case other = 0
    case defaultBranch = 1
    case waiting = 2
    case failing = 3

    public static func < (lhs: SlotRank, rhs: SlotRank) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The class of `state` now. `endFrameShown`: the card already showed the run's end, so a
    /// failure no longer lifts it (the failure's urgency ends with its end frame).
    public static func of(_ state: RunState, endFrameShown: Bool = false) -> SlotRank {
        let jobs = state.workflowJobs
        if !endFrameShown, jobs.contains(where: \.failed) { return .failing }
        if state.completion == nil, jobs.contains(where: \.isWaiting) { return .waiting }
        // A fork's `main` is a name its author chose, not the repository's default branch. A run
        // of unknown origin ranks as it always did: the rank only orders cards.
        if state.origin.forkName == nil, let branch = state.headBranch,
            let defaultBranch = state.repository.defaultBranch,
            branch == defaultBranch
        {
            return .defaultBranch
        }
        return .other
    }

    /// The PushWard `priority` (0–10) a card of this class is sent with, from the configured
    /// `pushward.priority` (`base`), which is the default branch's: each class one above the one
    /// below it, so PushWard's own eviction (lowest priority, then oldest) picks the card the
    /// bridge would give up. A run off the default branch gets one less (never below 0); a base
    /// above 7 leaves the higher classes sharing 10.
    public func priority(base: Int) -> Int { min(10, max(0, base + rawValue - 1)) }

    /// The summary card's priority: above every run class, because it stands for every run that
    /// has no card, and evicting it would drop all of them from the phone at once.
    public static func summaryPriority(base: Int) -> Int { min(10, max(0, base + SlotRank.failing.rawValue)) }

    /// For people: `failing`, `waiting for approval`, `default branch`, `other`.
    public var label: String {
        switch self {
        case .failing: "failing"
        case .waiting: "waiting for approval"
        case .defaultBranch: "default branch"
        case .other: "other"
        }
    }
}
