import BridgeCore
import Foundation

/// One part of the daemon with a lifetime of its own: the store, the dispatcher, a listener, a
/// background loop, systemd's readiness. `start` does its side effects (bind, spawn, notify);
/// `shutdown` undoes them and returns when it is done or `deadline` has passed.
protocol DaemonService: AnyObject, Sendable {
    /// For the log lines of the group.
    var name: String { get }
    func start() throws
    func shutdown(deadline: DispatchTime)
}

/// The daemon's services in the order they start; they stop in reverse, so nothing stops while
/// something started after it (and so possibly relying on it) still runs: systemd hears
/// `STOPPING=1` first, the listeners stop taking requests, the background loops finish their turn,
/// and the store's final checkpoint comes last. The shape of swift-service-lifecycle's
/// `ServiceGroup`, with blocking calls, since the daemon's stop runs on the signal thread.
final class ServiceGroup: @unchecked Sendable {
    private let services: [any DaemonService]
    private let logger: Logger
    private let lock = NSLock()
    private var started: [any DaemonService] = []

    init(_ services: [any DaemonService], logger: Logger) {
        self.services = services
        self.logger = logger
    }

    /// Starts every service in order. When one fails, those already started are shut down, in
    /// reverse, and the error is thrown: a daemon that cannot listen does not half-run.
    func start() throws {
        for service in services {
            do {
                try service.start()
            } catch {
                logger.error(
                    "could not start; stopping what had started", ["service": .string(service.name)])
                shutdown(deadline: .now() + 10)
                throw error
            }
            lock.withLock { started.append(service) }
        }
    }

    /// Stops the started services in reverse order, all within `deadline`. Idempotent.
    func shutdown(deadline: DispatchTime) {
        let stopping = lock.withLock {
            defer { started.removeAll() }
            return started
        }
        for service in stopping.reversed() {
            service.shutdown(deadline: deadline)
        }
    }

    /// The names, in start order: what `docs/ARCHITECTURE.md` and a test read.
    var names: [String] { services.map(\.name) }
}
