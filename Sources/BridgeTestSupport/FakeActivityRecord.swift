import BridgeCore

/// What the fake PushWard keeps about an activity besides its `StoredActivity` (state, content,
/// name, priority, TTLs — the part the bridge models too): the server-side times and fields the
/// documented `Activity` answer carries, and what the limits need.
public struct FakeActivityRecord: Sendable, Equatable {
    /// The `Activity.id`: stable and unique, minted at creation.
    public var id: String
    public var createdAt: UnixTime
    public var updatedAt: UnixTime
    /// When the activity last went `ongoing` ("oldest" for eviction); nil while it is not ongoing.
    public var ongoingSince: UnixTime?
    /// Set once, when the state first becomes `ended` (the documented `ended_at`).
    public var endedAt: UnixTime?
    /// The scheduled auto-deletion (`delete_at`), set at each end from `ended_ttl`.
    public var deleteAt: UnixTime?
    /// The stored `target` (organisation keys only); nil when there is none.
    public var target: JSONValue?
    public var dismissalTTL: Int?

    public init(id: String, at now: UnixTime) {
        self.id = id
        self.createdAt = now
        self.updatedAt = now
    }

    /// The user ids `target.members` names, or nil when the activity names none (untargeted, or
    /// targeted only by groups or tags, which the fake cannot resolve to people).
    public var members: [String]? {
        let names = target?["members"]?.arrayValue?.compactMap(\.stringValue) ?? []
        return names.isEmpty ? nil : names
    }
}
