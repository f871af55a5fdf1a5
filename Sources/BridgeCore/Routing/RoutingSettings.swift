/// The `routing` section: which PushWard organisation members (and groups, device tags) a run's
/// card and alerts go to. A run is for its person (`RunState.person`: the triggering actor, else
/// the actor, else the delivery's sender); logins match case-insensitively, as GitHub's do.
public struct RoutingSettings: Sendable, Equatable {
    /// What an unmapped run gets: everyone the key reaches (no `target`, as without routing), or
    /// no card and no alert at all.
    public enum Fallback: String, Sendable, Equatable {
        case everyone, nobody
    }

    /// Repositories (`*` globs) to group or tag names.
    public struct Mapping: Sendable, Equatable {
        public var repositories: GlobPattern
        public var names: [String]

        public init(repositories: GlobPattern, names: [String]) {
            self.repositories = repositories
            self.names = names
        }
    }

    /// Lower-cased GitHub login to PushWard member id.
    public var members: [String: String]
    public var groups: [Mapping]
    public var tags: [Mapping]
    public var fallback: Fallback

    public init(
        members: [String: String] = [:], groups: [Mapping] = [], tags: [Mapping] = [], fallback: Fallback = .everyone
    ) {
        self.members = Dictionary(members.map { ($0.key.lowercased(), $0.value) }) { first, _ in first }
        self.groups = groups
        self.tags = tags
        self.fallback = fallback
    }

    public var isEnabled: Bool { !members.isEmpty || !groups.isEmpty || !tags.isEmpty || fallback == .nobody }

    /// Where a run of `repository` for `person` goes.
    public func route(repository: String, person: String?) -> Route {
        let member = person.flatMap { members[$0.lowercased()] }
        let groupNames = groups.filter { $0.repositories.matches(repository) }.flatMap(\.names)
        let tagNames = tags.filter { $0.repositories.matches(repository) }.flatMap(\.names)
        let target = ActivityTarget(members: member.map { [$0] } ?? [], groups: groupNames, tags: tagNames)
        if !target.isEmpty { return .target(target, person: member == nil ? nil : person?.lowercased()) }
        return fallback == .nobody ? .nobody : .everyone
    }
}
