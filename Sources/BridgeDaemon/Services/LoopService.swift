import BridgeCore
import Foundation

/// A background loop as a service: `start` spawns its task, `shutdown` cancels it, wakes it from
/// whatever signal it sleeps on, and waits for it to end (at most until the deadline).
final class LoopService: DaemonService, @unchecked Sendable {
    let name: String
    private let operation: @Sendable () async -> Void
    private let wake: @Sendable () -> Void
    private let logger: Logger
    private var task: Task<Void, Never>?

    /// - Parameter wake: interrupts the loop's sleep so it sees the cancellation (a `WakeupSignal`
    ///   it waits on); a `Task.sleep` needs none.
    init(
        _ name: String, logger: Logger, wake: @escaping @Sendable () -> Void = {},
        _ operation: @escaping @Sendable () async -> Void
    ) {
        self.name = name
        self.logger = logger
        self.wake = wake
        self.operation = operation
    }

    func start() throws {
        task = Task(operation: operation)
    }

    func shutdown(deadline: DispatchTime) {
        guard let task else { return }
        task.cancel()
        wake()
        let finished = DispatchSemaphore(value: 0)
        Task {
            await task.value
            finished.signal()
        }
        if finished.wait(timeout: deadline) == .timedOut {
            logger.warning("did not finish before the shutdown deadline", ["service": .string(name)])
        }
        self.task = nil
    }
}
