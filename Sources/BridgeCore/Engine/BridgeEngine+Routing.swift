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
