import Dispatch
import Foundation

/// Wakes the dispatcher early: a delivery changed something, so it need not sleep until its next
/// timer. Signals that arrive while nobody waits are kept (one is enough).
public final class WakeupSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var pending = false
    private var waiter: CheckedContinuation<Void, Never>?
    /// Tells a wait's own timeout from that of an earlier wait that a signal already ended.
    private var generation = 0

    public init() {}

    public func signal() {
        lock.lock()
        if let waiter {
            self.waiter = nil
            lock.unlock()
            waiter.resume()
        } else {
            pending = true
            lock.unlock()
        }
    }

    /// Returns on a signal, or after `seconds`, whichever comes first.
    public func wait(atMost seconds: Double) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if pending {
                pending = false
                lock.unlock()
                continuation.resume()
                return
            }
            waiter = continuation
            generation += 1
            let current = generation
            lock.unlock()
            DispatchQueue.global().asyncAfter(deadline: .now() + max(0, seconds)) { [weak self] in
                self?.timeout(generation: current)
            }
        }
    }

    private func timeout(generation expired: Int) {
        lock.lock()
        guard expired == generation else {
            lock.unlock()
            return
        }
        let waiting = waiter
        waiter = nil
        lock.unlock()
        waiting?.resume()
    }
}
