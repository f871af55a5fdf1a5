import BridgeCore

/// PushWard's per-IP rate limit as the fake applies it: at most `limit` requests from one client
/// address in any `window` seconds, every endpoint counted; the next is refused with
/// `429 rate_limit.exceeded` and `Retry-After: 60`.
///
/// The documents give a rate ("200 req/min") and a fixed `Retry-After`, not the window's shape.
/// The fake uses a sliding window over the requests it let through: it is the stricter reading (a
/// fixed window lets up to twice the limit pass across a boundary), so a bridge that stays under
/// it stays under either. Refused requests are not counted, so a client that waits as told gets
/// through.
public struct FakeRateLimiter: Sendable {
    public var limit: Int
    public var window: Double
    /// Admitted request times by client address, oldest first, only those inside the window.
    private var admitted: [String: [UnixTime]] = [:]
    /// The most requests one address had inside a window, and how many were refused.
    public private(set) var peak = 0
    public private(set) var refused = 0

    public init(limit: Int, window: Double) {
        self.limit = limit
        self.window = window
    }

    /// True (and counted) when a request from `address` at `now` is within the limit.
    public mutating func admit(_ address: String, at now: UnixTime) -> Bool {
        var times = admitted[address, default: []]
        let start = times.firstIndex { $0 > now - window } ?? times.endIndex
        times.removeFirst(start)
        guard times.count < limit else {
            admitted[address] = times
            refused += 1
            return false
        }
        times.append(now)
        admitted[address] = times
        peak = max(peak, times.count)
        return true
    }
}
