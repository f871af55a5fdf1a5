/// How long a card waits after a failed request: exponential from 1 s, capped at 60 s, with
/// jitter so that many cards failing together do not come back together. Alerts use the same
/// curve on their own scale (`AlertRetry`).
public enum RetryPolicy {
    public static let base: Double = 1
    public static let cap: Double = 60

    /// - Parameters:
    ///   - failures: consecutive failures so far, including this one (≥ 1).
    ///   - jitter: a number in 0…1 from the caller's random source (the core has none); 1 is the
    ///     ceiling itself.
    ///   - base, cap: the first ceiling and the largest.
    public static func delay(
        afterFailures failures: Int, jitter: Double, base: Double = base, cap: Double = cap
    ) -> Double {
        let exponent = min(max(failures - 1, 0), 16)
        let ceiling = min(cap, base * Double(1 << exponent))
        // "Equal jitter": at least half the ceiling, so a retry never comes back at once.
        return ceiling / 2 + ceiling / 2 * min(max(jitter, 0), 1)
    }
}
