/// The account's room for activities: PushWard keeps at most 50 an account, ended ones included
/// until they are deleted, and refuses a create beyond (`409 activity.limit_exceeded`).
///
/// The bridge keeps its ended activities so the next run of a slug starts with a PATCH instead of
/// paying for a create, and deletes its own oldest ended ones only when the account nears the
/// cap: from `tidyFrom` activities on, down to one below it. What the account holds is read from
/// `GET /auth/me` (`activity_count`, free: at start, every 15 minutes and after a `409`) and moved
/// by the bridge's own creates and deletions between two reads, so a burst of new slugs is
/// tidied for before PushWard refuses one. Other tools' activities count too, and are never
/// deleted.
public struct AccountRoom: Sendable, Equatable {
    /// PushWard's cap on an account's activities.
    public static let capacity = 50
    /// From this many activities on, the bridge deletes its oldest ended ones.
    public static let tidyFrom = 45

    /// The account's activities as PushWard last said, moved by the bridge's creates and
    /// deletions since; nil before the first read.
    public private(set) var activityCount: Int?
    /// When PushWard last said.
    public private(set) var readAt: UnixTime?

    public init(activityCount: Int? = nil, readAt: UnixTime? = nil) {
        self.activityCount = activityCount
        self.readAt = readAt
    }

    /// What `GET /auth/me` said at `now`.
    public mutating func read(_ count: Int, at now: UnixTime) {
        activityCount = max(0, count)
        readAt = now
    }

    /// The bridge created an activity PushWard did not hold before (as far as it knows).
    public mutating func noteCreated() {
        activityCount = activityCount.map { $0 + 1 }
    }

    /// PushWard took a deletion of one of the bridge's activities.
    public mutating func noteDeleted() {
        activityCount = activityCount.map { max(0, $0 - 1) }
    }

    /// How many activities to delete so the account holds fewer than `tidyFrom`; 0 below it or
    /// before a read.
    public var excess: Int {
        guard let count = activityCount, count >= Self.tidyFrom else { return 0 }
        return count - (Self.tidyFrom - 1)
    }

    /// Which of `candidates` (the bridge's own ended activities, with when each ended) to delete
    /// now: the oldest first, as many as `excess` wants beyond the `asked` deletions already on
    /// their way. Ties go by slug, so the choice is the same on every instance and replay.
    public func victims(among candidates: [(slug: String, endedAt: UnixTime)], asked: Int) -> [String] {
        let wanted = excess - asked
        guard wanted > 0 else { return [] }
        return candidates.sorted { ($0.endedAt, $0.slug) < ($1.endedAt, $1.slug) }.prefix(wanted).map(\.slug)
    }
}
