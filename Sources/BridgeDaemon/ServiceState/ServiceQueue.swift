import Dispatch
import Synchronization

/// The service's own dispatch queue, and what other threads leave for it: deliveries from HTTP
/// threads waiting for the next group commit, on PostgreSQL the committer that answers them off
/// this queue, and whether applying the deliveries other instances committed is already scheduled.
/// A class: HTTP threads and the leadership loop use it while the actor is busy.
final class ServiceQueue: Sendable {
    /// Runs the actor's jobs on a queue of its own, since SQLite calls block.
    let executor = DispatchQueueExecutor(label: "pushward-bridge.store")
    /// Deliveries from HTTP threads waiting for the next group commit.
    let ingest = IngestQueue(maxBatch: 64)
    /// On PostgreSQL: commits and answers deliveries for the leader to apply, off this queue.
    let answers: WaitingDeliveryCommitter?
    private let applyScheduled = Atomic<Bool>(false)

    init(answers: WaitingDeliveryCommitter?) {
        self.answers = answers
    }

    /// Deliveries received and not answered yet (queued, or in the commit under way).
    var waiting: Int { ingest.waiting + (answers?.waiting ?? 0) }

    /// Runs `job` on the queue, behind whatever is queued there already.
    func async(_ job: @escaping @Sendable () -> Void) {
        executor.queue.async(execute: job)
    }

    /// True for the first of any number of asks until `applyStarted`: the one that schedules it.
    func scheduleApply() -> Bool {
        applyScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    /// The scheduled apply began: an ask from now on schedules another.
    func applyStarted() {
        applyScheduled.store(false, ordering: .releasing)
    }
}
