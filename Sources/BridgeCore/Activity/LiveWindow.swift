/// The ETA window the card may count down for its current step.
///
/// It holds facts, not a duration: the remaining time is worked out when the request is actually
/// sent (`remaining(at:)`), so an update delayed by throttling or an outage still ends on time.
public struct LiveWindow: Sendable, Equatable, Codable {
    /// iOS counts down only windows worth it; below this there is nothing to animate.
    public static let minimumRemaining: Double = 5
    /// No estimate is trusted beyond this.
    public static let maximumRemaining: Double = 12 * 3600

    /// The 1-based step the window belongs to.
    public var step: Int
    /// The step's expected duration, from history.
    public var estimate: Double
    /// When the step's first job started; nil when none has yet (the window then starts when sent).
    public var startedAt: UnixTime?

    public init(step: Int, estimate: Double, startedAt: UnixTime?) {
        self.step = step
        self.estimate = estimate
        self.startedAt = startedAt
    }

    /// Whole seconds still ahead at `now`, capped at 12 h; nil when fewer than 5 remain.
    public func remaining(at now: UnixTime) -> Int? {
        let elapsed = max(0, now - (startedAt ?? now))
        let remaining = min(estimate - elapsed, Self.maximumRemaining)
        guard remaining >= Self.minimumRemaining else { return nil }
        return Int(remaining.rounded())
    }
}
