/// PushWard's `target` (organisation keys only): who of the organisation a card or a
/// notification reaches. Lists are unions: members by id, groups and device tags by name.
public struct ActivityTarget: Sendable, Hashable, Codable {
    public var members: [String]
    public var groups: [String]
    public var tags: [String]

    /// Sorted and without repeats, so the same people are always the same body.
    public init(members: [String] = [], groups: [String] = [], tags: [String] = []) {
        self.members = Array(Set(members)).sorted()
        self.groups = Array(Set(groups)).sorted()
        self.tags = Array(Set(tags)).sorted()
    }

    public var isEmpty: Bool { members.isEmpty && groups.isEmpty && tags.isEmpty }

    /// The request member, within PushWard's limits (members ≤ 100, groups and tags ≤ 20).
    public var json: JSONValue {
        var object: [String: JSONValue] = [:]
        if !members.isEmpty { object["members"] = .array(members.prefix(100).map { .string($0) }) }
        if !groups.isEmpty { object["groups"] = .array(groups.prefix(20).map { .string($0) }) }
        if !tags.isEmpty { object["tags"] = .array(tags.prefix(20).map { .string($0) }) }
        return .object(object)
    }

    /// For people: `members usr_1, groups payments`.
    public var description: String {
        [("members", members), ("groups", groups), ("tags", tags)].filter { !$0.1.isEmpty }
            .map { "\($0.0) \($0.1.joined(separator: ", "))" }.joined(separator: "; ")
    }
}
