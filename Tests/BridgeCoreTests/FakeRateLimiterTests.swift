import BridgeCore
import BridgeTestSupport
import Testing

/// The fake PushWard's per-address rate limit on a clock of its own: a sliding window over the
/// requests it let through.
@Suite struct FakeRateLimiterTests {
    private let now: UnixTime = 1_790_000_000

    /// The answers to requests from `address` at each of `times`, in order.
    private func admit(_ limiter: inout FakeRateLimiter, _ address: String, at times: [UnixTime]) -> [Bool] {
        times.map { limiter.admit(address, at: $0) }
    }

    @Test func admitsTheLimitInAnyWindowAndNoMore() {
        var limiter = FakeRateLimiter(limit: 200, window: 60)
        let first = admit(&limiter, "10.0.0.1", at: (0..<200).map { now + Double($0) * 0.25 })
        #expect(first == Array(repeating: true, count: 200))
        let over = admit(&limiter, "10.0.0.1", at: [now + 50])
        let other = admit(&limiter, "10.0.0.2", at: [now + 50])
        #expect(over == [false])
        #expect(other == [true], "each address has its own count")
        // At now + 60 the first request (at now) has left the window: one more fits, not two.
        let later = admit(&limiter, "10.0.0.1", at: [now + 60, now + 60.1])
        #expect(later == [true, false])
        #expect(limiter.refused == 2)
        #expect(limiter.peak == 200)
    }

    @Test func slidesRatherThanResettingAtTheMinute() {
        // A fixed window would let 200 at 0:59 and 200 more at 1:00; a sliding one does not.
        var limiter = FakeRateLimiter(limit: 200, window: 60)
        let burst = admit(&limiter, "a", at: Array(repeating: now + 59, count: 200))
        #expect(burst.allSatisfy { $0 })
        let after = admit(&limiter, "a", at: [now + 61, now + 118.9, now + 119.5])
        #expect(after == [false, false, true])
    }

    @Test func refusedRequestsDoNotExtendTheWait() {
        var limiter = FakeRateLimiter(limit: 2, window: 10)
        let answers = admit(&limiter, "a", at: (0..<10).map { now + Double($0) } + [now + 10.5])
        #expect(answers == [true, true] + Array(repeating: false, count: 8) + [true], "who waits as told gets through")
    }
}
