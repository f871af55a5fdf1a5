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

extension ActivityIdentity {
    /// A fresh session for this activity.
    var session: ActivitySession { ActivitySession(identity: self) }
}

extension BridgeEngine {
    /// The first 16 hex characters of the API key's SHA-256: which key a refusal was for.
    public static func fingerprint(ofKey key: String) -> String {
        String(SHA256.hexDigest(of: key).prefix(16))
    }

    /// Set to the configured key's fingerprint: a refusal recorded for another key no longer
    /// holds, so targets are tried again (a personal key replaced by an organisation one).
    public mutating func useKey(fingerprint: String?) {
        keyFingerprint = fingerprint
        if gate.targetsRefusedAt != nil, gate.targetsRefusedKey != fingerprint {
            gate.targetsRefusedAt = nil
            gate.targetsRefusedKey = nil
            changes.gate = true
        }
    }

    /// Where the run's card and alerts go under `routing`: everyone when routing is off.
    public func route(for state: RunState) -> Route {
        guard routing.isEnabled else { return .everyone }
        return routing.route(repository: state.key.repository, person: state.person)
    }

    /// PushWard refused a `target`: from now on nothing carries one. Every activity not created
    /// yet loses its target; created ones keep what PushWard took (none, as it refused).
    public mutating func refuseTargets(at now: UnixTime) {
        guard gate.targetsRefusedAt == nil else { return }
        gate.targetsRefusedAt = now
        gate.targetsRefusedKey = keyFingerprint
        changes.gate = true
        for slug in sessions.keys where sessions[slug]?.identity.target != nil {
            sessions[slug]?.identity.target = nil
            dirtySlugs.insert(slug)
            changes.slugs.insert(slug)
        }
    }
}
