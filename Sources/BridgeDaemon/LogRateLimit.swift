import BridgeCore
import Foundation

/// Lets one line a period through and counts the rest, for log lines that unauthenticated
/// clients can trigger at will (a 401 for every forged delivery): without it, anyone who can reach
/// the listener decides how fast the journal fills.
///
/// The line that gets through says how many were dropped since the last one, so nothing is hidden,
/// only folded. Thread-safe: the webhook listener calls it from libmicrohttpd's threads.
public final class LogRateLimit: @unchecked Sendable {
    /// Seconds between two lines that get through.
    public let period: Double
    private let lock = NSLock()
    /// When the last line got through; nil before the first.
    private var lastAdmitted: UnixTime?
    private var dropped = 0

    public init(period: Double = 1) {
        self.period = period
    }

    /// Whether a line may be written at `now`: nil when it is dropped (and counted), else the number
    /// of lines dropped since the last one that got through.
    public func admit(at now: UnixTime) -> Int? {
        lock.withLock {
            if let last = lastAdmitted, now - last < period, now >= last {
                dropped += 1
                return nil
            }
            let count = dropped
            lastAdmitted = now
            dropped = 0
            return count
        }
    }
}
