import Foundation

/// What every libmicrohttpd callback of one daemon shares: the handler, the limits, and the count
/// of live per-request states.
///
/// The server keeps it alive for as long as the daemon runs and hands libmicrohttpd an unretained
/// pointer to it; `HTTPServer.stop()` joins libmicrohttpd's threads before the server can let go
/// of it, so no callback can outlive it.
final class ServerContext: @unchecked Sendable {
    /// Called on libmicrohttpd's threads, once per complete request that passed the body limit.
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    /// The largest body, in bytes, handed to `handler`.
    let maxBodyBytes: Int
    /// The largest request line plus header block, in bytes, handed to `handler`.
    let maxHeaderBytes: Int

    /// Guards `liveStates`; callbacks run on several pool threads at once.
    private let lock = NSLock()
    private var liveStates = 0

    init(handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse, maxBodyBytes: Int, maxHeaderBytes: Int) {
        self.handler = handler
        self.maxBodyBytes = maxBodyBytes
        self.maxHeaderBytes = maxHeaderBytes
    }

    /// How many `RequestState`s exist: requests between their request line and their completion
    /// notice. Zero when idle; anything else at rest would be a leak.
    var liveRequestStates: Int {
        lock.withLock { liveStates }
    }

    func requestStateCreated() {
        lock.withLock { liveStates += 1 }
    }

    func requestStateDestroyed() {
        lock.withLock { liveStates -= 1 }
    }
}
