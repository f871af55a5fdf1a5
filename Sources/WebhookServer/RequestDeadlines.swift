import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The deadline of every connection's request: its request line, headers and body must all have
/// arrived within `limit` of the connection's accept — on a keep-alive connection, of the end of
/// the request before — or the connection is closed.
///
/// libmicrohttpd's own timeout (`connectionTimeout`) is an idle timeout: a client that sends a
/// byte every few seconds never trips it, and a few hundred such clients hold every connection
/// slot for as long as they like, so nobody else is served. libmicrohttpd has no deadline of its
/// own, hence this table and its sweeper thread: every `interval` the sweeper shuts down
/// (`shutdown(fd, SHUT_RDWR)`) the socket of each connection past its deadline whose request is
/// still arriving. libmicrohttpd's polling thread then sees the end of the stream, closes the
/// connection and reports its request ended, which releases the request's state and its share of
/// the body budget. Shutting down is the one thing done from outside libmicrohttpd's threads; it
/// touches no libmicrohttpd structure.
///
/// A connection whose request has arrived is not cut: while it waits for the handler's answer the
/// handler's own answer timeout bounds it, and while the answer is written the idle timeout covers
/// a client that stops reading.
///
/// Socket numbers are reused as soon as they are closed, so shutting down a stale one could cut an
/// unrelated connection. That cannot happen here: the sweeper only touches sockets of connections
/// still registered, under the same lock the close notification takes to unregister them, and
/// libmicrohttpd 0.9.75 sends that notification before it closes the socket.
final class RequestDeadlines: @unchecked Sendable {
    /// One open connection: its socket and since when its current request has been arriving.
    private struct Connection {
        let fd: Int32
        var since: ContinuousClock.Instant
        /// False while the request has arrived (with the handler, or its answer being written),
        /// and after the sweeper cut it (it is shut down once, whatever libmicrohttpd does next).
        var arriving = true
    }

    /// How long a request may take to arrive; nil: no deadline, no sweeper.
    let limit: Duration?
    /// How often the sweeper looks: a quarter of the deadline, from 50 ms to 1 s, so a connection
    /// is cut at most that late.
    let interval: Duration
    /// Called after a sweep with how many connections it cut (metrics); on the sweeper thread.
    private let onCut: (@Sendable (Int) -> Void)?

    /// Guards everything below and wakes the sweeper to stop.
    private let condition = NSCondition()
    private var connections: [Int: Connection] = [:]
    private var nextID = 1
    private var stopping = false
    private var sweeperStopped: DispatchSemaphore?

    /// `seconds`: the deadline; 0 for none.
    init(seconds: Int, onCut: (@Sendable (Int) -> Void)? = nil) {
        limit = seconds > 0 ? .seconds(seconds) : nil
        let quarter = Duration.milliseconds(seconds * 250)
        interval = min(max(quarter, .milliseconds(50)), .seconds(1))
        self.onCut = onCut
    }

    /// Connections open now (registered and not yet reported closed).
    var openConnections: Int {
        condition.withLock { connections.count }
    }

    /// Registers a connection just accepted, whose first request starts arriving now; returns its
    /// id (never 0, so it can travel as a non-null socket context).
    func opened(fd: Int32) -> Int {
        condition.withLock {
            let id = nextID
            nextID += 1
            connections[id] = Connection(fd: fd, since: .now)
            return id
        }
    }

    /// Forgets a connection libmicrohttpd is closing; after this its socket is never touched.
    func closed(_ id: Int) {
        _ = condition.withLock { connections.removeValue(forKey: id) }
    }

    /// The connection's request has arrived in full (or has been answered by the server itself):
    /// its deadline no longer applies.
    func requestArrived(_ id: Int) {
        condition.withLock { connections[id]?.arriving = false }
    }

    /// The connection's request is over; on a keep-alive connection the next one may start, and
    /// its deadline counts from now.
    func requestEnded(_ id: Int) {
        condition.withLock {
            connections[id]?.since = .now
            connections[id]?.arriving = true
        }
    }

    /// Shuts down the socket of every connection whose request is still arriving past the deadline;
    /// returns how many.
    func sweep(now: ContinuousClock.Instant = .now) -> Int {
        guard let limit else { return 0 }
        return condition.withLock {
            var cut = 0
            for (id, connection) in connections where connection.arriving && now - connection.since >= limit {
                // Still registered, under the lock `closed` takes: the socket is this connection's.
                shutdown(connection.fd, Int32(SHUT_RDWR))
                connections[id]?.arriving = false
                cut += 1
            }
            return cut
        }
    }

    /// Starts the sweeper thread (none without a deadline).
    func start() {
        guard limit != nil else { return }
        let stopped = DispatchSemaphore(value: 0)
        condition.withLock { sweeperStopped = stopped }
        let thread = Thread { [self] in
            runSweeper()
            stopped.signal()
        }
        thread.name = "pwb-deadlines"
        thread.start()
    }

    /// Stops the sweeper thread and waits for it; safe to call more than once.
    func stop() {
        let stopped = condition.withLock {
            stopping = true
            condition.broadcast()
            defer { sweeperStopped = nil }
            return sweeperStopped
        }
        stopped?.wait()
    }

    private func runSweeper() {
        let wait = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        while true {
            let finished = condition.withLock {
                if !stopping { _ = condition.wait(until: Date().addingTimeInterval(wait)) }
                return stopping
            }
            if finished { return }
            let cut = sweep()
            if cut > 0 { onCut?(cut) }
        }
    }
}
