import Dispatch
import Foundation

/// Deliveries waiting for the store, handed over by HTTP threads (which do not wait) and taken in
/// groups.
///
/// Group commit: while the store commits one group, the deliveries arriving meanwhile gather here
/// and go into the next transaction together. A commit costs about the same for one delivery as
/// for twenty (the WAL pages of the indexes, the run and card rows touched by several of them),
/// so under load the store does far less work per delivery, and when idle a lone delivery still
/// commits at once: nothing waits for a group to fill.
final class IngestQueue: @unchecked Sendable {
    /// One delivery and where its answer goes.
    struct Ticket: Sendable {
        let delivery: IncomingDelivery
        /// Called on the store's queue after the group's commit (or rollback).
        let completion: @Sendable (IngestResult) -> Void
    }

    /// The most deliveries in one transaction: bounds how long one commit holds the store queue.
    let maxBatch: Int
    // `pending`, `scheduled` and `unanswered` are guarded by `lock`.
    private let lock = NSLock()
    private var pending: [Ticket] = []
    private var scheduled = false
    private var unanswered = 0

    init(maxBatch: Int) {
        precondition(maxBatch >= 1)
        self.maxBatch = maxBatch
    }

    /// Queues `ticket`; true when no drain is scheduled yet, so the caller must schedule one.
    func append(_ ticket: Ticket) -> Bool {
        lock.withLock {
            pending.append(ticket)
            unanswered += 1
            if scheduled { return false }
            scheduled = true
            return true
        }
    }

    /// Hands `result` to whoever waits for `ticket`.
    func answer(_ ticket: Ticket, with result: IngestResult) {
        lock.withLock { unanswered -= 1 }
        ticket.completion(result)
    }

    /// Deliveries handed over and not answered yet: queued or in the transaction under way.
    var waiting: Int { lock.withLock { unanswered } }

    /// The next group, oldest first; empty (and the next `append` schedules a drain) when nothing waits.
    func take() -> [Ticket] {
        lock.withLock {
            guard !pending.isEmpty else {
                scheduled = false
                return []
            }
            let count = min(maxBatch, pending.count)
            let batch = Array(pending.prefix(count))
            pending.removeFirst(count)
            return batch
        }
    }
}
