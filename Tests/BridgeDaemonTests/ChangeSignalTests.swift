import BridgeTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The wait the end-to-end tests use instead of polling windows: it returns when its condition
/// holds, however late, wakes only on a change, misses none, and ends when the test is cancelled.
@Suite("Change signal", .timeLimit(.minutes(1)))
struct ChangeSignalTests {
    /// A number behind a lock that signals each change.
    final class Counter: @unchecked Sendable {
        let signal = ChangeSignal()
        private let lock = NSLock()
        private var stored = 0
        var value: Int { lock.withLock { stored } }

        func increment() {
            lock.withLock { stored += 1 }
            signal.changed()
        }
    }

    @Test("a condition that already holds returns at once, asked once")
    func alreadyTrue() async {
        let signal = ChangeSignal()
        var asked = 0
        #expect(
            await signal.wait {
                asked += 1
                return true
            })
        #expect(asked == 1)
    }

    @Test("changes from another thread wake the waiter until the condition holds; none is missed")
    func wakesOnChanges() async {
        let counter = Counter()
        let waiter = Task { await counter.signal.wait { counter.value >= 500 } }
        // A thread of its own, changing as fast as it can while the waiter checks and registers:
        // a change between a check and the registration must not be lost.
        Thread {
            for _ in 0..<500 { counter.increment() }
        }.start()
        #expect(await waiter.value)
        #expect(counter.value == 500)
    }

    @Test("cancelling the waiting task ends the wait with false")
    func cancelled() async {
        let signal = ChangeSignal()
        let waiter = Task { await signal.wait { false } }
        waiter.cancel()
        #expect(await waiter.value == false)
    }

    @Test("the fake PushWard's until wakes on the request it records")
    func fakeWakes() async throws {
        let fake = try FakePushWardServer()
        let waiter = Task { await fake.until { fake.requests.contains { $0.path == "/auth/me" } } }
        var request = URLRequest(url: try #require(URL(string: fake.baseURL + "/auth/me")))
        request.setValue("Bearer \(fake.apiKey)", forHTTPHeaderField: "Authorization")
        _ = try await URLSession.shared.data(for: request)
        #expect(await waiter.value)
    }
}
