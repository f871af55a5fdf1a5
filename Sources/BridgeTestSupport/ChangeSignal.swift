import Foundation

/// Lets a test wait for a fake's state to change instead of polling it: the fake calls `changed()`
/// each time it records something, and `wait(until:)` checks its condition then and only then.
///
/// Why not a polling loop with a deadline: a deadline in seconds is a guess about how fast the
/// machine is, and under a sanitizer with the whole end-to-end target running beside it the guess
/// was wrong (the condition came, later than the window). Here the only bound is the test's own
/// time limit, which cancels the wait; nothing is slept.
public final class ChangeSignal: @unchecked Sendable {
    private let lock = NSLock()
    /// Counts the changes, so a waiter that checked before a change and registers after it sees
    /// that it missed one instead of waiting for the next.
    private var generation = 0
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter = 0

    public init() {}

    /// Wakes every waiter to check its condition again. Call after the change is visible to the
    /// condition (after the lock guarding it was released).
    public func changed() {
        let woken = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            generation += 1
            let woken = Array(waiters.values)
            waiters.removeAll()
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns once `condition` holds: true then, false when the task was cancelled first (the
    /// test's time limit). `condition` runs on the waiting task, once at the start and once after
    /// each change.
    public func wait(until condition: () -> Bool) async -> Bool {
        while !Task.isCancelled {
            let seen = lock.withLock { generation }
            if condition() { return true }
            await next(after: seen)
        }
        return condition()
    }

    /// Suspends until the generation passes `seen` or the task is cancelled.
    private func next(after seen: Int) async {
        let id = lock.withLock { () -> Int in
            nextWaiter += 1
            return nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = lock.withLock { () -> Bool in
                    if generation != seen || Task.isCancelled { return true }
                    waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = lock.withLock { waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
