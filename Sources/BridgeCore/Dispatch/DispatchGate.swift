/// What holds back every request to PushWard at once, whatever the card: the API key's quota or
/// rate limit, a key PushWard refuses, and the circuit breaker. Kept in the store, so a restart
/// does not forget that the quota is spent.
public struct DispatchGate: Sendable, Equatable, Codable {
    /// `429 quota.exceeded`: the monthly update quota is spent; nothing is sent before this.
    public var quotaPausedUntil: UnixTime?
    /// `429 rate_limit.exceeded`: wait this long (capped at 2 minutes).
    public var rateLimitedUntil: UnixTime?
    /// `401`/`403`: the key is wrong or lacks scope; retried after this, with growing pauses.
    public var authBlockedUntil: UnixTime?
    public var authFailures = 0
    /// The last refusal that blocks everything, for maintainers (`runs show`, logs, metrics).
    public var reason: String?
    public var breaker = CircuitBreaker()
    /// When PushWard refused a `target` (a personal key gets 422 for any): from then on cards and
    /// alerts go without one, to everyone the key reaches. Nil while targets are accepted.
    public var targetsRefusedAt: UnixTime?
    /// A fingerprint of the key that was refused (`BridgeEngine.keyFingerprint`): with another
    /// key configured, targets are tried again.
    public var targetsRefusedKey: String?

    public static let rateLimitCap: Double = 120
    public static let firstAuthPause: Double = 60
    public static let longestAuthPause: Double = 3_600

    public init() {}

    /// When sending may resume; nil when it may now.
    public func blockedUntil(at now: UnixTime) -> UnixTime? {
        let times = [quotaPausedUntil, rateLimitedUntil, authBlockedUntil, breaker.blockedUntil(at: now)]
            .compactMap { $0 }.filter { $0 > now }
        return times.max()
    }

    /// True while the quota is spent: the card keeps computing, nothing is sent.
    public func quotaExhausted(at now: UnixTime) -> Bool {
        quotaPausedUntil.map { now < $0 } ?? false
    }
}
