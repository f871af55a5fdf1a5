/// Stops hammering a PushWard that is down: after `threshold` consecutive failures (no answer or
/// 5xx) it opens for a cool-down, then lets one probe through; the probe's fate closes it or opens
/// it again for longer.
public struct CircuitBreaker: Sendable, Equatable, Codable {
    public enum State: String, Sendable, Codable {
        /// Requests flow.
        case closed
        /// Nothing is sent until `openUntil`.
        case open
        /// One probe is out; nothing else is sent until it comes back.
        case halfOpen = "half_open"
    }

    public static let threshold = 5
    public static let firstCoolDown: Double = 15
    public static let longestCoolDown: Double = 300

    public private(set) var state: State = .closed
    public private(set) var consecutiveFailures = 0
    public private(set) var openUntil: UnixTime?
    /// The cool-down the next opening uses; doubles each time a probe fails.
    public private(set) var coolDown: Double = firstCoolDown

    public init() {}

    /// Whether a request may go out at `now`; claims the probe slot when the cool-down is over.
    public mutating func admit(at now: UnixTime) -> Bool {
        switch state {
        case .closed: return true
        case .halfOpen: return false
        case .open:
            guard let openUntil, now >= openUntil else { return false }
            state = .halfOpen
            return true
        }
    }

    /// When sending may resume; nil when it may now.
    public func blockedUntil(at now: UnixTime) -> UnixTime? {
        switch state {
        case .closed: return nil
        case .halfOpen: return nil
        case .open: return openUntil.flatMap { $0 > now ? $0 : nil }
        }
    }

    public mutating func recordSuccess() {
        state = .closed
        consecutiveFailures = 0
        openUntil = nil
        coolDown = Self.firstCoolDown
    }

    public mutating func recordFailure(at now: UnixTime) {
        consecutiveFailures += 1
        switch state {
        case .halfOpen:
            coolDown = min(Self.longestCoolDown, coolDown * 2)
            open(at: now)
        case .closed where consecutiveFailures >= Self.threshold:
            open(at: now)
        case .closed, .open:
            break
        }
    }

    private mutating func open(at now: UnixTime) {
        state = .open
        openUntil = now + coolDown
    }
}
