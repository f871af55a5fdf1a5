import Foundation

/// A service that is two steps and no task: something to do at start, something at shutdown
/// (systemd's `READY=1` and `STOPPING=1`, the WAL checkpointer's final checkpoint).
final class StepService: DaemonService, @unchecked Sendable {
    let name: String
    private let onStart: () throws -> Void
    private let onShutdown: () -> Void

    init(_ name: String, start: @escaping () throws -> Void = {}, shutdown: @escaping () -> Void = {}) {
        self.name = name
        onStart = start
        onShutdown = shutdown
    }

    func start() throws { try onStart() }

    func shutdown(deadline: DispatchTime) { onShutdown() }
}
