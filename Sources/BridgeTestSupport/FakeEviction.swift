import BridgeCore

/// One eviction the fake PushWard made: an activity going `ongoing` took a person over the
/// ongoing cap, and the lowest-priority, then oldest, ongoing activity of that person became
/// `preempted`. Tests read these to check the bridge chose its five cards itself.
public struct FakeEviction: Sendable, Equatable {
    /// The activity evicted (now `preempted`).
    public var slug: String
    public var at: UnixTime
    /// The activity whose going `ongoing` made the room (the same slug when the newcomer was
    /// itself the lowest-priority one).
    public var by: String
    /// The person whose cap it was (see `InMemoryPushWard.persons(of:)`).
    public var person: String

    public init(slug: String, at: UnixTime, by: String, person: String) {
        self.slug = slug
        self.at = at
        self.by = by
        self.person = person
    }
}
