import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP/1.1 server: one libmicrohttpd daemon that reads whole requests and hands them to a
/// handler that answers through an `HTTPResponder`, at once or later from any thread.
///
/// libmicrohttpd owns the sockets, the parser, the connection and per-IP limits and the idle
/// timeout; the server adds a deadline for each request to arrive (`requestDeadline`, see
/// `RequestDeadlines`), which libmicrohttpd has not; its internal polling threads (epoll on Linux) form a pool of `threadPoolSize`, and
/// the handler runs on those threads. A handler that cannot answer at once keeps the responder and
/// returns without blocking: the connection is suspended (`MHD_suspend_connection`) until
/// `respond` resumes it. So a request waiting for its answer (the webhook waits for its group
/// commit before 202) holds a connection, not a thread, and the pool thread goes on serving other
/// connections. A handler given to the convenience initialiser returns its answer, so it runs to
/// the end on a pool thread (the admin listener uses one); only such handlers occupy the pool,
/// whose size then bounds how many run at once. A slow or idle client costs a socket and a little
/// memory, never a thread.
///
/// Bodies are read completely into memory (webhooks are at most 25 MB) and capped at
/// `maxBodyBytes`: a larger declared `Content-Length` gets 413 before the body is read, and a
/// chunked upload that grows past the limit is read to its end, discarded, and answered 413.
///
/// `@unchecked Sendable`: everything is immutable; the daemon pointer is `RunningDaemon`'s, behind its lock.
public final class HTTPServer: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// Where to listen (`127.0.0.1:8080`, `[::]:8080`, ...; see `ListenAddress`), or a Unix
        /// socket (`unix:/run/pushward-bridge/admin.sock`, mode 0600; see `UnixListenSocket`).
        /// Ignored when `listenFileDescriptor` is set.
        public var listen: String
        /// The largest request body accepted, in bytes; larger ones are answered 413. GitHub sends
        /// at most 25 MB.
        public var maxBodyBytes: Int
        /// At most this many open connections; at the limit libmicrohttpd stops accepting, and
        /// further ones wait in the kernel's backlog until one closes (measured on 0.9.75).
        public var connectionLimit: Int
        /// At most this many open connections from one IP address; 0 means no per-IP limit.
        /// Behind a reverse proxy every connection comes from the proxy: raise it or set 0.
        public var perIPConnectionLimit: Int
        /// Seconds a connection may stay idle (no byte received or sent) before the server closes
        /// it; 0 means never. This frees a socket from a client that stops mid-request, but not
        /// from one that sends a byte now and then: `requestDeadline` does.
        public var connectionTimeout: Int
        /// Seconds a request may take to arrive — request line, headers and body — counted from
        /// the connection's accept, or on a keep-alive connection from the end of the request
        /// before; past it the connection is closed unanswered. 0 means no deadline. A request that
        /// has arrived is not cut while it waits for its answer.
        ///
        /// Without it a client trickling a byte every few seconds keeps a connection slot for as
        /// long as it likes, and a few hundred of them starve everyone else. 30 s by default:
        /// GitHub gives up on a delivery after 10 s, and 30 s still carries a 25 MiB body at
        /// about 7 Mbit/s.
        public var requestDeadline: Int
        /// The largest request line plus header block accepted, in bytes; larger ones are answered
        /// 431. GitHub's headers are about 1–2 KiB.
        ///
        /// libmicrohttpd has no header limit of its own. It parses the request line and headers in
        /// place in a per-connection memory pool (`MHD_OPTION_CONNECTION_MEMORY_LIMIT`) that also
        /// holds the read buffer for the body and, later, the response's header block; a header
        /// block that does not fit the pool gets libmicrohttpd's own 431 (measured on 0.9.75: up
        /// to about pool size − 512 bytes fits). So the pool is `connectionMemoryLimit` =
        /// `maxHeaderBytes` + 8 KiB, which always leaves room for the body buffer and a response,
        /// and the access handler counts the headers itself and answers 431 (JSON) above
        /// `maxHeaderBytes`. The server-side 431 is therefore the exact limit; libmicrohttpd's
        /// is a backstop about 7.5 KiB higher.
        public var maxHeaderBytes: Int
        /// libmicrohttpd polling threads, which also run the handler. At least 1.
        public var threadPoolSize: Int
        /// An already bound and listening socket to serve instead of binding `listen` (systemd
        /// socket activation passes fd 3). The server closes it when it stops.
        public var listenFileDescriptor: Int32?
        /// The most body bytes all requests still being received may hold together, before any
        /// handler has seen (and verified) them; 0 means no budget. Without one, every connection
        /// may buffer up to `maxBodyBytes` before its signature is checked: 512 connections of
        /// 25 MiB is 12.5 GiB that any client can make the process hold. A request whose body does
        /// not fit is answered 503 with `Retry-After` (at once when its `Content-Length` says so,
        /// else when its upload ends, the rest of it read and dropped).
        public var unverifiedBodyBudget: Int
        /// Called once per request refused for the budget (metrics); on libmicrohttpd's threads.
        public var onBudgetRefusal: (@Sendable () -> Void)?
        /// Called with how many connections were closed for their `requestDeadline` (metrics), at
        /// most once per sweep; on the server's deadline thread.
        public var onDeadlineCut: (@Sendable (Int) -> Void)?

        public init(
            listen: String,
            maxBodyBytes: Int = 25 * 1024 * 1024,
            connectionLimit: Int = 512,
            perIPConnectionLimit: Int = 64,
            connectionTimeout: Int = 15,
            requestDeadline: Int = 30,
            maxHeaderBytes: Int = 32 * 1024,
            threadPoolSize: Int = 4,
            listenFileDescriptor: Int32? = nil,
            unverifiedBodyBudget: Int = 64 * 1024 * 1024,
            onBudgetRefusal: (@Sendable () -> Void)? = nil,
            onDeadlineCut: (@Sendable (Int) -> Void)? = nil
        ) {
            self.listen = listen
            self.maxBodyBytes = maxBodyBytes
            self.connectionLimit = connectionLimit
            self.perIPConnectionLimit = perIPConnectionLimit
            self.connectionTimeout = connectionTimeout
            self.requestDeadline = requestDeadline
            self.maxHeaderBytes = maxHeaderBytes
            self.threadPoolSize = threadPoolSize
            self.listenFileDescriptor = listenFileDescriptor
            self.unverifiedBodyBudget = unverifiedBodyBudget
            self.onBudgetRefusal = onBudgetRefusal
            self.onDeadlineCut = onDeadlineCut
        }

        /// The per-connection memory pool given to libmicrohttpd (see `maxHeaderBytes`): the
        /// header allowance plus 8 KiB for the body read buffer and the response's header block.
        /// Measured on 0.9.75: with headers just under the limit, a response with 2 KiB of
        /// headers and a 1 MiB body still goes through; when headers fill the pool to the brim,
        /// such a response no longer fits and libmicrohttpd closes the connection unanswered.
        public var connectionMemoryLimit: Int {
            maxHeaderBytes + 8 * 1024
        }

        /// Nil when every number is in range, else what is wrong.
        func problem() -> String? {
            if maxBodyBytes < 0 { return "maxBodyBytes must not be negative" }
            if !(1...Int(Int32.max)).contains(connectionLimit) { return "connectionLimit must be at least 1" }
            if !(0...Int(Int32.max)).contains(perIPConnectionLimit) {
                return "perIPConnectionLimit must not be negative"
            }
            if !(0...86_400).contains(connectionTimeout) {
                return "connectionTimeout must be 0 to 86400 seconds"
            }
            if !(0...86_400).contains(requestDeadline) {
                return "requestDeadline must be 0 to 86400 seconds"
            }
            if !(1024...(16 * 1024 * 1024)).contains(maxHeaderBytes) {
                return "maxHeaderBytes must be 1 KiB to 16 MiB"
            }
            if !(1...256).contains(threadPoolSize) { return "threadPoolSize must be 1 to 256" }
            if let fd = listenFileDescriptor, fd < 0 { return "listenFileDescriptor must not be negative" }
            if unverifiedBodyBudget < 0 { return "unverifiedBodyBudget must not be negative" }
            return nil
        }
    }

    public let configuration: Configuration
    /// The port the server listens on: the kernel's choice when `listen` asked for port 0.
    public let port: Int
    /// The parsed `listen` address; nil when serving `listenFileDescriptor` or a Unix socket.
    public let address: ListenAddress?
    /// The socket file of a `unix:PATH` listen value, removed when the server stops.
    public let socketPath: String?

    /// The daemon and its context; what a stop handed to another thread holds (see `RunningDaemon`).
    private let running: RunningDaemon
    private var context: ServerContext { running.context }

    /// Starts listening at once; requests reach `handler` on libmicrohttpd's threads until `stop()`,
    /// and its answer is sent when it returns. For handlers that answer at once.
    public convenience init(
        configuration: Configuration,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws(HTTPServerError) {
        try self.init(configuration: configuration) { request, responder in responder.respond(handler(request)) }
    }

    /// Starts listening at once; requests reach `handler` on libmicrohttpd's threads until `stop()`.
    /// The handler must not block: it answers through the responder, at once or later from any
    /// thread, and a request waiting for its answer holds a suspended connection, not a thread.
    public init(
        configuration: Configuration,
        answering handler: @escaping @Sendable (HTTPRequest, HTTPResponder) -> Void
    ) throws(HTTPServerError) {
        if let problem = configuration.problem() { throw .invalidConfiguration(problem) }
        var configuration = configuration
        var socketPath: String?
        if configuration.listenFileDescriptor == nil, let path = UnixListenSocket.path(of: configuration.listen) {
            configuration.listenFileDescriptor = try UnixListenSocket.bind(path: path)
            socketPath = path
        }
        let address = configuration.listenFileDescriptor == nil ? try ListenAddress(parsing: configuration.listen) : nil
        let context = ServerContext(
            handler: handler, maxBodyBytes: configuration.maxBodyBytes, maxHeaderBytes: configuration.maxHeaderBytes,
            bodyBudget: configuration.unverifiedBodyBudget, onBudgetRefusal: configuration.onBudgetRefusal,
            requestDeadline: configuration.requestDeadline, onDeadlineCut: configuration.onDeadlineCut)
        let contextPointer = Unmanaged.passUnretained(context).toOpaque()

        let isIPv6: Bool
        let dualStack: Bool
        if let fd = configuration.listenFileDescriptor {
            isIPv6 = Self.socketFamily(fd) == AF_INET6
            dualStack = false
        } else {
            isIPv6 = address?.isIPv6 ?? false
            dualStack = address?.isIPv6Unspecified ?? false
        }

        let start = { (socketAddress: UnsafePointer<sockaddr>?) -> OpaquePointer? in
            pwb_start_daemon(
                pwb_daemon_flags(isIPv6 ? 1 : 0, dualStack ? 1 : 0),
                socketAddress,
                configuration.listenFileDescriptor ?? -1,
                pwbHandleRequest, contextPointer,
                pwbRequestStarted, contextPointer,
                pwbRequestCompleted, contextPointer,
                pwbConnectionNotified, contextPointer,
                UInt32(configuration.connectionLimit),
                UInt32(configuration.perIPConnectionLimit),
                UInt32(configuration.connectionTimeout),
                configuration.connectionMemoryLimit,
                UInt32(configuration.threadPoolSize))
        }
        errno = 0
        let started = address.map { $0.withSocketAddress { pointer, _ in start(pointer) } } ?? start(nil)
        let startErrno = errno
        guard let started else {
            let place = address?.description ?? "file descriptor \(configuration.listenFileDescriptor ?? -1)"
            if let socketPath, let fd = configuration.listenFileDescriptor {
                close(fd)
                unlink(socketPath)
            }
            throw .startFailed(address: place, errno: startErrno, message: String(cString: strerror(startErrno)))
        }

        self.configuration = configuration
        self.address = address
        self.socketPath = socketPath
        self.running = RunningDaemon(daemon: started, context: context, socketPath: socketPath)
        self.port = Self.boundPort(started)
        context.deadlines.start()
    }

    deinit {
        stop()
    }

    /// Body bytes held now by requests not yet handed to the handler (see `unverifiedBodyBudget`).
    public var unverifiedBodyBytes: Int {
        context.heldBodyBytes
    }

    /// Requests between their request line and their completion: in progress now. Zero when the
    /// server is idle — tests use it to prove no per-request state leaks.
    public var requestsInFlight: Int {
        context.liveRequestStates
    }

    /// Connections open now, whatever their state (tests use it to see slots held and freed).
    var openConnections: Int {
        context.deadlines.openConnections
    }

    /// Whether the server still runs: false once a stop has finished (a stop under way holds the
    /// lock, so this waits for it).
    var isRunning: Bool { running.isRunning }

    /// Stops the server; safe to call more than once and from any thread. A call made while another
    /// is stopping the server waits for it; later calls return at once. Called from inside the
    /// handler (an owner's `deinit`, or this server's, run there because the handler held the last
    /// reference), it returns at once and the stop runs on another thread: stopping joins
    /// libmicrohttpd's threads, the handler runs on one of them, and libmicrohttpd aborts a daemon
    /// stopped from its own thread. That thread holds the `RunningDaemon`, never the server.
    ///
    /// First stops accepting (`MHD_quiesce_daemon`), then, for up to `drainTimeout` seconds,
    /// lets requests already begun finish — being handled, or still being received, which
    /// includes stalled clients until their `requestDeadline` — then waits up
    /// to `answerTimeout` seconds for requests already with the handler to be answered and
    /// written (past it they are answered 503), then stops libmicrohttpd's threads, closes the
    /// remaining connections and the listening socket. New connections fail once it returns; during the
    /// drain they wait in the kernel backlog and are reset when the socket closes.
    public func stop(drainTimeout: Double = 0, answerTimeout: Double = 10) {
        running.stop(drainTimeout: drainTimeout, answerTimeout: answerTimeout)
    }

    /// The bound port from libmicrohttpd, or from the socket itself if libmicrohttpd cannot say.
    private static func boundPort(_ daemon: OpaquePointer) -> Int {
        let reported = Int(pwb_daemon_port(daemon))
        if reported > 0 { return reported }
        let fd = pwb_daemon_listen_fd(daemon)
        guard fd >= 0 else { return 0 }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return 0 }
        let family = Int32(storage.ss_family)
        guard family == AF_INET || family == AF_INET6 else { return 0 }
        // sin_port and sin6_port both sit right after the 2-byte family, in network order.
        return withUnsafeBytes(of: &storage) { Int(UInt16(bigEndian: $0.load(fromByteOffset: 2, as: UInt16.self))) }
    }

    /// The address family of a socket (AF_INET, AF_INET6), or -1.
    private static func socketFamily(_ fd: Int32) -> Int32 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return result == 0 ? Int32(storage.ss_family) : -1
    }
}
