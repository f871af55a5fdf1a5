import Foundation
import WebhookServer

/// An HTTP listener as a service: `start` binds (or takes systemd's socket) and serves,
/// `shutdown` stops taking connections and lets the answers under way go out.
final class ListenerService: DaemonService, @unchecked Sendable {
    let name: String
    private let makeServer: () throws -> HTTPServer
    private let lock = NSLock()
    private var server: HTTPServer?

    init(_ name: String, _ makeServer: @escaping () throws -> HTTPServer) {
        self.name = name
        self.makeServer = makeServer
    }

    func start() throws {
        let server = try makeServer()
        lock.withLock { self.server = server }
    }

    func shutdown(deadline: DispatchTime) {
        lock.withLock { server }?.stop()
    }

    /// The bound port; 0 before `start`.
    var port: Int { lock.withLock { server?.port } ?? 0 }
}
