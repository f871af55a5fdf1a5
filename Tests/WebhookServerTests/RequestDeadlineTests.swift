import BridgeCore
import Foundation
import Testing

@testable import WebhookServer

#if canImport(Glibc)
    import Glibc
#endif

/// The request deadline: a request's line, headers and body must arrive within `requestDeadline`
/// of the connection's accept (or of the previous request's end), however often its bytes come,
/// so slow clients cannot keep every connection slot; a request that has arrived is not cut.
@Suite("request deadline", .serialized, .timeLimit(.minutes(2)))
struct RequestDeadlineTests {
    /// Counts what the server reports from its own threads.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add(_ amount: Int = 1) { lock.withLock { count += amount } }
        var value: Int { lock.withLock { count } }
    }

    /// Sends one byte every `every` seconds on a socket from a thread of its own until a send
    /// fails (the server closed it) or `stop()`; a slowloris client.
    final class Trickle: @unchecked Sendable {
        private let lock = NSLock()
        private var stopped = false
        private var failed = false
        private var sentBytes = 0
        private let done = DispatchSemaphore(value: 0)

        init(fd: Int32, byte: UInt8, every: Double) {
            Thread.detachNewThread { [self] in
                var value = byte
                while !lock.withLock({ stopped }) {
                    usleep(useconds_t(every * 1_000_000))
                    if Glibc.send(fd, &value, 1, Int32(MSG_NOSIGNAL)) != 1 {
                        lock.withLock { failed = true }
                        break
                    }
                    lock.withLock { sentBytes += 1 }
                }
                done.signal()
            }
        }

        /// True once a send failed: the server shut the connection.
        var cutOff: Bool { lock.withLock { failed } }
        var sent: Int { lock.withLock { sentBytes } }

        func stop() {
            lock.withLock { stopped = true }
            _ = done.wait(timeout: .now() + 10)
        }
    }

    /// Waits until `condition` holds, up to 30 s: the server updates its counts on its own
    /// threads, which a loaded machine can starve for seconds.
    static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while !condition() && Date() < deadline { usleep(5_000) }
        return condition()
    }

    @Test("the table cuts only connections still registered whose request is still arriving past the deadline")
    func sweepDecides() throws {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { pair.forEach { close($0) } }
        var other: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &other) == 0)
        defer { other.forEach { close($0) } }

        let table = RequestDeadlines(seconds: 2)
        #expect(table.interval == .milliseconds(500))
        let arriving = table.opened(fd: pair[0])
        let answered = table.opened(fd: other[0])
        table.requestArrived(answered)
        let now = ContinuousClock.now
        #expect(table.sweep(now: now + .seconds(1)) == 0)
        #expect(table.sweep(now: now + .seconds(3)) == 1)
        // The peer of the cut socket sees the end of the stream; the other socket is untouched.
        var byte: UInt8 = 0
        #expect(recv(pair[1], &byte, 1, Int32(MSG_DONTWAIT)) == 0)
        #expect(recv(other[1], &byte, 1, Int32(MSG_DONTWAIT)) == -1 && errno == EAGAIN)
        // Cut once only; a closed connection's socket is never touched again.
        #expect(table.sweep(now: now + .seconds(10)) == 0)
        table.requestEnded(answered)
        table.closed(answered)
        #expect(table.sweep(now: now + .seconds(60)) == 0)
        #expect(recv(other[1], &byte, 1, Int32(MSG_DONTWAIT)) == -1 && errno == EAGAIN)
        table.closed(arriving)
        #expect(table.openConnections == 0)
        // No deadline: nothing is ever cut, and no sweeper runs.
        let none = RequestDeadlines(seconds: 0)
        _ = none.opened(fd: other[0])
        #expect(none.sweep(now: now + .seconds(86_400)) == 0)
        none.start()
        none.stop()
    }

    @Test("slow clients from several addresses hold every slot only until the deadline; then another address is served")
    func slotsFreedAtDeadline() throws {
        let deadline = 3
        let addresses = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
        let perAddress = 4
        let cuts = Counter()
        let configuration = HTTPServer.Configuration(
            listen: "127.0.0.1:0", connectionLimit: addresses.count * perAddress, perIPConnectionLimit: perAddress,
            connectionTimeout: 120, requestDeadline: deadline, threadPoolSize: 2, onDeadlineCut: { cuts.add($0) })
        let server = try HTTPServer(configuration: configuration) { request in
            .json(200, ["path": .string(request.path)])
        }
        defer { server.stop() }

        // Half trickle their headers, half their body, one byte every 200 ms: never idle.
        var holders: [RawHTTPClient] = []
        var trickles: [Trickle] = []
        defer { trickles.forEach { $0.stop() } }
        for (index, address) in addresses.enumerated() {
            for slot in 0..<perAddress {
                let client = try RawHTTPClient(port: server.port, source: address, timeout: 30)
                if (index + slot) % 2 == 0 {
                    try client.send("POST /webhook HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                } else {
                    try client.send("POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{")
                }
                holders.append(client)
                trickles.append(Trickle(fd: client.fd, byte: UInt8(ascii: "a"), every: 0.2))
            }
        }
        #expect(Self.eventually { server.openConnections == holders.count })
        let held = Date()

        // Every slot is taken: a client from a fourth address is closed unanswered.
        let refused = try RawHTTPClient(port: server.port, source: "127.0.0.5", timeout: 1)
        try? refused.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect((try? refused.readResponse()) == nil)

        // Past the deadline the slow clients are cut, and the fourth address is served.
        var answered: RawHTTPClient.Response?
        while answered == nil && Date().timeIntervalSince(held) < 60 {
            answered = try? RawHTTPClient.request(
                port: server.port, source: "127.0.0.5", timeout: 2, method: "GET", target: "/healthz")
            if answered == nil { usleep(100_000) }
        }
        let waited = Date().timeIntervalSince(held)
        print("request deadline \(deadline) s: a fresh client was answered \(waited) s after all slots were held")
        #expect(answered?.status == 200)
        for holder in holders {
            #expect(try holder.waitForClose())
        }
        #expect(Self.eventually { cuts.value == holders.count })
        #expect(trickles.allSatisfy { $0.sent > 0 })
        #expect(Self.eventually { server.requestsInFlight == 0 && server.unverifiedBodyBytes == 0 })
        #expect(Self.eventually { server.openConnections == 0 })
    }

    @Test("a request trickling past its deadline is closed, and its state and body budget are released")
    func tricklingRequestReleased() throws {
        let cuts = Counter()
        let handled = Counter()
        let configuration = HTTPServer.Configuration(
            listen: "127.0.0.1:0", connectionTimeout: 120, requestDeadline: 1, onDeadlineCut: { cuts.add($0) })
        let server = try HTTPServer(configuration: configuration) { _ in
            handled.add()
            return .json(200, ["ok": true])
        }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port, timeout: 30)
        try client.send("POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{\"a\":\"\u{202E}\u{0}😀")
        let trickle = Trickle(fd: client.fd, byte: UInt8(ascii: "b"), every: 0.1)
        defer { trickle.stop() }
        #expect(Self.eventually { server.requestsInFlight == 1 && server.unverifiedBodyBytes == 100_000 })
        #expect(try client.waitForClose())
        #expect(Self.eventually { trickle.cutOff })
        #expect(Self.eventually { server.requestsInFlight == 0 && server.unverifiedBodyBytes == 0 })
        #expect(Self.eventually { server.openConnections == 0 })
        #expect(cuts.value == 1)
        #expect(handled.value == 0)
    }

    @Test(
        "a request that has arrived is not cut while its answer takes longer than the deadline; the next one on the connection has its own deadline"
    )
    func arrivedRequestKept() throws {
        let configuration = HTTPServer.Configuration(listen: "127.0.0.1:0", connectionTimeout: 120, requestDeadline: 1)
        let server = try HTTPServer(
            configuration: configuration,
            answering: { request, responder in
                if request.path == "/later" {
                    DispatchQueue.global().asyncAfter(deadline: .now() + 2.5) {
                        responder.respond(.json(202, ["late": true]))
                    }
                } else {
                    responder.respond(.json(200, ["now": true]))
                }
            })
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port, timeout: 30)
        try client.send("GET /later HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().status == 202)
        // Counted from the end of the request before, a second one sent in pieces over half the
        // deadline arrives in time, although the connection is older than the deadline by far.
        for piece in ["GET /n", "ow HTTP/1.1\r\n", "Host: x\r\n", "\r\n"] {
            try client.send(piece)
            usleep(120_000)
        }
        #expect(try client.readResponse().status == 200)
        // And a third one that never finishes is cut like the first request of a connection.
        try client.send("GET /now HTTP/1.1\r\nHost: x\r\n")
        let trickle = Trickle(fd: client.fd, byte: UInt8(ascii: "X"), every: 0.1)
        defer { trickle.stop() }
        #expect(try client.waitForClose())
        #expect(Self.eventually { server.requestsInFlight == 0 && server.openConnections == 0 })
    }

    @Test("a deadline out of range is refused by name")
    func configurationRange() {
        for seconds in [-1, 86_401] {
            #expect(throws: HTTPServerError.invalidConfiguration("requestDeadline must be 0 to 86400 seconds")) {
                _ = try HTTPServer(configuration: .init(listen: "127.0.0.1:0", requestDeadline: seconds)) { _ in
                    HTTPResponse(status: 200)
                }
            }
        }
    }
}
