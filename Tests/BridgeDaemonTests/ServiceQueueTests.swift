import Dispatch
import Synchronization
import Testing

@testable import BridgeDaemon

/// `ServiceQueue`: applying the waiting deliveries is scheduled once however often it is asked,
/// and jobs run on the service's own queue, in order.
@Suite("The service's queue")
struct ServiceQueueTests {
    @Test("one apply is scheduled for any number of asks until it starts; then the next ask schedules again")
    func applyOnce() {
        let queue = ServiceQueue(answers: nil)
        let asks = (0..<5).map { _ in queue.scheduleApply() }
        #expect(asks == [true, false, false, false, false])
        queue.applyStarted()
        let again = queue.scheduleApply()
        #expect(again)
        #expect(queue.waiting == 0, "nothing queued, no committer")
    }

    @Test("jobs run on the executor's queue, in the order they were left")
    func jobsRunInOrder() async {
        let queue = ServiceQueue(answers: nil)
        let order = Mutex<[Int]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for index in 0..<20 {
                queue.async {
                    dispatchPrecondition(condition: .onQueue(queue.executor.queue))
                    order.withLock { $0.append(index) }
                    if index == 19 { done.resume() }
                }
            }
        }
        #expect(order.withLock { $0 } == Array(0..<20))
    }
}
