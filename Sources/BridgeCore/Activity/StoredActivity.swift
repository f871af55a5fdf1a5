/// What the PushWard server holds for one activity slug, as far as the bridge can know it.
///
/// The bridge keeps one per slug as the server's *acknowledged* state (updated by
/// `PushWardActivityModel` after each 2xx), so it can diff the next frame against what is really
/// stored — merge-patch carries every field forward, including ones a previous run left behind.
/// The tests' fake server keeps the same value, so both sides agree on the rules.
public struct StoredActivity: Sendable, Equatable, Codable {
    /// `"ongoing"` or `"ended"`. A freshly created activity is `"ended"`: the first
    /// `ended → ongoing` PATCH is what starts the Live Activity on the phones.
    public var state: String
    /// The stored template content, after every merge-patch so far (never contains `null`
    /// members, which a merge-patch removes). Empty for a new activity.
    public var content: [String: JSONValue]
    public var name: String
    public var priority: Int
    /// Seconds the ended activity stays on the Lock Screen; nil = the server's default.
    public var endedTTL: Int?
    /// Seconds without an update before the server ends the activity; nil = the server's default.
    public var staleTTL: Int?

    public init(
        state: String = "ended", content: [String: JSONValue] = [:], name: String, priority: Int,
        endedTTL: Int? = nil, staleTTL: Int? = nil
    ) {
        self.state = state
        self.content = content
        self.name = name
        self.priority = priority
        self.endedTTL = endedTTL
        self.staleTTL = staleTTL
    }
}
