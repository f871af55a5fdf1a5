extension BridgeEngine {
    /// The first 16 hex characters of the API key's SHA-256: which key a refusal was for.
    public static func fingerprint(ofKey key: String) -> String {
        String(SHA256.hexDigest(of: key).prefix(16))
    }

    /// Set to the configured key's fingerprint: a refusal recorded for another key no longer
    /// holds, so targets are tried again (a personal key replaced by an organisation one).
    public mutating func useKey(fingerprint: String?) {
        dispatch.useKey(fingerprint: fingerprint, changes: &changes)
    }

    /// Where the run's card and alerts go under `routing`: everyone when routing is off.
    public func route(for state: RunState) -> Route {
        configuration.route(for: state)
    }

    /// PushWard refused a `target`: from now on nothing carries one. Every activity not created
    /// yet loses its target; created ones keep what PushWard took (none, as it refused).
    public mutating func refuseTargets(at now: UnixTime) {
        guard dispatch.refuseTargets(at: now, changes: &changes) else { return }
        for slug in cardBook.slugs(where: { $1.identity.target != nil }) {
            cardBook.update(slug, changes: &changes) { $0.identity.target = nil }
        }
    }
}
