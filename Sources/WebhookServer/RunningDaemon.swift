import BridgeCore
import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A started libmicrohttpd daemon, the context its callbacks read, and the one way to stop it.
///
/// Apart from `HTTPServer` so that a stop handed to another thread has something alive to hold.
/// A server whose last reference is dropped inside its own handler (an owner released there)
/// runs its `deinit` on a libmicrohttpd thread, where the stop cannot run: it joins that thread.
/// The stop then goes to a global queue, and what that closure captures must outlive the
/// `deinit`; capturing the server itself would leave it a pointer to freed memory, and
/// libmicrohttpd's threads a freed context. The closure captures this object instead, which
/// keeps the context alive until `MHD_stop_daemon` has joined every thread that could call back.
///
/// `@unchecked Sendable`: `daemon` is guarded by `lock`; the rest is immutable.
final class RunningDaemon: @unchecked Sendable {
    /// What libmicrohttpd's callbacks are handed, unretained: held here until the daemon stopped.
    let context: ServerContext
    /// The socket file of a `unix:PATH` listen value, removed once the daemon stopped.
    private let socketPath: String?
    /// Held for the whole of `stop`, so concurrent callers wait for the one stopping.
    private let lock = NSLock()
    /// Nil once stopped.
    private var daemon: OpaquePointer?

    init(daemon: OpaquePointer, context: ServerContext, socketPath: String?) {
        self.daemon = daemon
        self.context = context
        self.socketPath = socketPath
    }

    /// False once a stop has finished (a stop under way holds the lock, so this waits for it).
    var isRunning: Bool { lock.withLock { daemon != nil } }

    /// See `HTTPServer.stop(drainTimeout:answerTimeout:)`.
    func stop(drainTimeout: Double, answerTimeout: Double) {
        if HandlerThread.isRunning(for: context) {
            DispatchQueue.global().async { self.stop(drainTimeout: drainTimeout, answerTimeout: answerTimeout) }
            return
        }
        lock.withLock {
            guard let stopping = daemon else { return }
            // Returns the listening socket, which libmicrohttpd then leaves to us to close, after
            // MHD_stop_daemon (its threads may still look at it until then).
            let listenSocket = MHD_quiesce_daemon(stopping)
            let deadline = Date().addingTimeInterval(drainTimeout)
            while context.liveRequestStates > 0 && Date() < deadline {
                usleep(10_000)
            }
            // Requests already with the handler get their answer written (a delivery whose commit
            // is under way is answered), within `answerTimeout`.
            let answerDeadline = Date().addingTimeInterval(answerTimeout)
            while context.handedRequests > 0 && Date() < answerDeadline {
                usleep(5_000)
            }
            // Past it, whatever still waits is told 503 (the sender can retry) and resumed, since
            // libmicrohttpd must not stop with a suspended connection; a late answer is ignored.
            let unanswered = context.answerAll(
                .json(503, ["error": "shutting_down", "detail": "the server stopped before this request was answered"]))
            if unanswered > 0 {
                let flushDeadline = Date().addingTimeInterval(1)
                while context.handedRequests > 0 && Date() < flushDeadline {
                    usleep(5_000)
                }
            }
            MHD_stop_daemon(stopping)
            // Last: during the drain above it still cuts requests past their deadline.
            context.deadlines.stop()
            if listenSocket >= 0 {
                close(listenSocket)
            }
            if let socketPath { unlink(socketPath) }
            daemon = nil
        }
    }
}
