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

    /// Takes a delivery from an HTTP thread: on PostgreSQL to the committer, else into the next
    /// group; `drain` is called (to schedule one on this queue) when the group was empty.
    func submit(
        _ delivery: IncomingDelivery, completion: @escaping @Sendable (IngestResult) -> Void,
        drain: () -> Void
    ) {
        if let answers { return answers.submit(delivery, completion: completion) }
        if ingest.append(IngestQueue.Ticket(delivery: delivery, completion: completion)) { drain() }
    }

    /// Commits one group with `commit` (on this queue) and hands the answers out from another
    /// thread (building each response, its metrics, resuming its connection), so the queue takes
    /// the next group at once. False when no delivery was waiting.
    func drain(_ commit: ([IncomingDelivery]) -> [IngestResult]) -> Bool {
        let batch = ingest.take()
        guard !batch.isEmpty else { return false }
        let results = commit(batch.map(\.delivery))
        let tickets = ingest
        DispatchQueue.global().async {
            for (ticket, result) in zip(batch, results) { tickets.answer(ticket, with: result) }
        }
        return true
    }

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
