import Dispatch

/// A serial executor backed by a `DispatchQueue`, so an actor that makes blocking SQLite calls
/// runs them on its own thread instead of Swift's small cooperative pool (which has 2 threads on
/// this kind of machine: one blocked commit would stall every task). `DispatchSerialQueue` does not
/// exist on Linux, hence this.
public final class DispatchQueueExecutor: SerialExecutor {
    public let queue: DispatchQueue

    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    /// Lets code that runs on `queue` outside a job (the ingest drain) enter the actor with
    /// `assumeIsolated`: the runtime asks the executor whether the current thread is its own.
    public func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
