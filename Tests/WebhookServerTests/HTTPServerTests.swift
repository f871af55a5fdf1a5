import BridgeCore
import Foundation
import Testing

@testable import WebhookServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// What the handler saw, readable from the test thread.
final class RequestLog: @unchecked Sendable {
    private let lock = NSLock()
    private var requests: [HTTPRequest] = []

    func record(_ request: HTTPRequest) {
        lock.withLock { requests.append(request) }
    }

    var all: [HTTPRequest] {
        lock.withLock { requests }
    }
}

/// Starts a loopback server on port 0 that records every request and answers with `respond`.
private func makeServer(
    listen: String = "127.0.0.1:0",
    maxBodyBytes: Int = 25 * 1024 * 1024,
    connectionTimeout: Int = 15,
    maxHeaderBytes: Int = 32 * 1024,
    threadPoolSize: Int = 4,
    log: RequestLog = RequestLog(),
    respond: @escaping @Sendable (HTTPRequest) -> HTTPResponse = { _ in .json(200, ["ok": true]) }
) throws -> HTTPServer {
    let configuration = HTTPServer.Configuration(
        listen: listen, maxBodyBytes: maxBodyBytes, connectionTimeout: connectionTimeout,
        maxHeaderBytes: maxHeaderBytes, threadPoolSize: threadPoolSize)
    return try HTTPServer(configuration: configuration) { request in
        log.record(request)
        return respond(request)
    }
}

/// Waits (up to 30 s) for every per-request state of `server` to be released: the completion
/// callback runs just after the last response byte is sent, so a client can see the response a
/// moment before the count drops.
private func expectNoLiveRequests(_ server: HTTPServer, sourceLocation: SourceLocation = #_sourceLocation) {
    let deadline = Date().addingTimeInterval(30)
    while server.requestsInFlight != 0 && Date() < deadline {
        usleep(10_000)
    }
    #expect(server.requestsInFlight == 0, "per-request states leaked", sourceLocation: sourceLocation)
}

/// Runs `work` on a thread of its own (not Swift's small cooperative pool, which blocking socket
/// calls would starve) and returns a way to wait for its result.
private func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) -> @Sendable () throws -> T {
    let group = DispatchGroup()
    let box = ResultBox<T>()
    group.enter()
    Thread.detachNewThread {
        box.set(Result { try work() })
        group.leave()
    }
    return {
        group.wait()
        return try box.get()
    }
}

private final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<T, any Error>?

    func set(_ value: Result<T, any Error>) {
        lock.withLock { result = value }
    }

    func get() throws -> T {
        // Only called after the DispatchGroup says the value is set.
        try lock.withLock { result! }.get()
    }
}

// Serialized: several tests measure that something happens "in well under N seconds", and the
// test machines have two cores; running the 25 MiB upload beside them would only add noise.
@Suite("HTTPServer", .serialized)
struct HTTPServerTests {
    @Test("A POST reaches the handler intact and the response comes back intact (URLSession)")
    func roundTrip() async throws {
        let log = RequestLog()
        let server = try makeServer(log: log) { request in
            HTTPResponse(
                status: 202,
                headers: [("Content-Type", "text/plain; charset=utf-8"), ("X-Echo-Path", request.path)],
                body: Data("got \(request.body.count) bytes".utf8))
        }
        defer { server.stop() }
        #expect(server.port > 0)

        let body = Data(#"{"action":"completed","n":1}"#.utf8)
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/webhook/github?x=1&y=a%20b"))
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("workflow_job", forHTTPHeaderField: "X-GitHub-Event")
        request.setValue("test/1", forHTTPHeaderField: "User-Agent")
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)

        #expect(http.statusCode == 202)
        #expect(http.value(forHTTPHeaderField: "X-Echo-Path") == "/webhook/github")
        #expect(http.value(forHTTPHeaderField: "Content-Type") == "text/plain; charset=utf-8")
        #expect(String(decoding: data, as: UTF8.self) == "got \(body.count) bytes")

        let seen = try #require(log.all.first)
        #expect(log.all.count == 1)
        #expect(seen.method == "POST")
        #expect(seen.path == "/webhook/github")
        #expect(seen.query == "x=1&y=a%20b")
        #expect(seen.body == body)
        #expect(seen.header("x-github-event") == "workflow_job")
        #expect(seen.header("X-GitHub-Event") == "workflow_job")
        #expect(seen.headers["content-type"] == "application/json")
        #expect(seen.headers["content-length"] == "\(body.count)")
        #expect(seen.remoteAddress == "127.0.0.1")
        expectNoLiveRequests(server)
    }

    @Test("Headers: names lowercased, repeats joined; targets without a query; an empty JSON response")
    func headersAndTargets() throws {
        let log = RequestLog()
        let server = try makeServer(log: log) { _ in HTTPResponse(status: 204) }
        defer { server.stop() }

        let response = try RawHTTPClient.request(
            port: server.port, method: "GET", target: "/status",
            headers: [("X-Thing", "a"), ("x-thing", "b"), ("Accept", "*/*")])
        #expect(response.status == 204)
        #expect(response.body.isEmpty)
        let trailing = try RawHTTPClient.request(port: server.port, method: "DELETE", target: "/x?")
        #expect(trailing.status == 204)

        let seen = log.all
        #expect(seen.count == 2)
        #expect(seen.first?.method == "GET")
        #expect(seen.first?.path == "/status")
        #expect(seen.first?.query == nil)
        #expect(seen.first?.headers["x-thing"] == "a, b")
        #expect(seen.first?.body.isEmpty == true)
        #expect(seen.last?.method == "DELETE")
        #expect(seen.last?.path == "/x")
        #expect(seen.last?.query == "")
        expectNoLiveRequests(server)
    }

    @Test("A query of thousands of pairs, and one with NUL and bidi escapes, reaches the handler whole and at once")
    func manyQueryPairs() throws {
        let log = RequestLog()
        let server = try makeServer(connectionTimeout: 30, log: log)
        defer { server.stop() }
        // libmicrohttpd's own argument table would hold these in its connection pool, which about
        // a thousand pairs exhaust: the connection then hung until the idle timeout.
        let many = (0..<3_000).map { _ in "a" }.joined(separator: "&")
        let hostile = "repo=%00%E2%80%AE&=&==&%&limit=99999999999999999999"
        for query in [many, hostile] {
            let started = Date()
            let response = try RawHTTPClient.request(port: server.port, method: "GET", target: "/api/runs?" + query)
            #expect(response.status == 200)
            #expect(Date().timeIntervalSince(started) < 5, "answered after \(Date().timeIntervalSince(started)) s")
            #expect(log.all.last?.path == "/api/runs")
            #expect(log.all.last?.query == query)
        }
        expectNoLiveRequests(server)
    }

    @Test("HTTPResponse.json: application/json, canonical body and a newline")
    func jsonResponse() throws {
        let server = try makeServer { _ in .json(200, ["b": 1, "a": ["x", nil]]) }
        defer { server.stop() }
        let response = try RawHTTPClient.request(port: server.port, method: "GET", target: "/")
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "application/json")
        #expect(String(decoding: response.body, as: UTF8.self) == "{\"a\":[\"x\",null],\"b\":1}\n")
    }

    @Test("A status libmicrohttpd would refuse becomes a 500, still exactly one response")
    func invalidStatus() throws {
        let server = try makeServer { _ in HTTPResponse(status: 42) }
        defer { server.stop() }
        let response = try RawHTTPClient.request(port: server.port)
        #expect(response.status == 500)
        #expect(response.json?["error"] as? String == "internal_error")
        expectNoLiveRequests(server)
    }

    @Test("Two requests on one keep-alive connection each get their own state")
    func keepAlive() throws {
        let log = RequestLog()
        let server = try makeServer(log: log) { request in
            HTTPResponse(status: 200, body: request.body)
        }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST /one HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
        let first = try client.readResponse()
        try client.send("POST /two HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nde")
        let second = try client.readResponse()
        #expect(first.status == 200 && first.body == Data("abc".utf8))
        #expect(second.status == 200 && second.body == Data("de".utf8))
        #expect(log.all.map(\.path) == ["/one", "/two"])
        expectNoLiveRequests(server)
    }

    @Test("A 25 MiB body is accepted when the limit is 25 MiB")
    func largestBodyAccepted() throws {
        let size = 25 * 1024 * 1024
        var body = Data(count: size)
        body.withUnsafeMutableBytes { (bytes: UnsafeMutableRawBufferPointer) in
            for index in stride(from: 0, to: size, by: 4096) {
                bytes[index] = UInt8(truncatingIfNeeded: index >> 12)
            }
        }
        let expected = body
        let server = try makeServer(maxBodyBytes: size) { request in
            request.body == expected ? .json(200, ["bytes": .number(Double(request.body.count))]) : .json(400, [:])
        }
        defer { server.stop() }
        let response = try RawHTTPClient.request(
            port: server.port, headers: [("Content-Type", "application/octet-stream")], body: body)
        #expect(response.status == 200)
        #expect(response.json?["bytes"] as? Int == size)
        expectNoLiveRequests(server)
    }

    @Test("Content-Length over the limit is answered 413 before the body is read; the handler never runs")
    func declaredTooLarge() throws {
        let log = RequestLog()
        let server = try makeServer(log: log)
        defer { server.stop() }

        // Only the head is sent: the answer must not wait for 25 MiB + 1 bytes that never come.
        let client = try RawHTTPClient(port: server.port)
        try client.send(
            "POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(25 * 1024 * 1024 + 1)\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.json?["error"] as? String == "payload_too_large")
        #expect(response.json?["limit_bytes"] as? Int == 25 * 1024 * 1024)
        // libmicrohttpd closes a connection whose request body it did not read.
        #expect(try client.waitForClose())

        // The same with `Expect: 100-continue`: no 100 is sent, the 413 comes straight away.
        let polite = try RawHTTPClient(port: server.port)
        try polite.send("POST /webhook HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 99999999\r\n\r\n")
        #expect(try polite.readResponse().status == 413)

        #expect(log.all.isEmpty)
        expectNoLiveRequests(server)
    }

    @Test("A chunked upload that grows past the limit is answered 413 at its end; the handler never runs")
    func chunkedTooLarge() throws {
        let log = RequestLog()
        let server = try makeServer(maxBodyBytes: 1024, log: log)
        defer { server.stop() }

        let client = try RawHTTPClient(port: server.port)
        var request = "POST /webhook HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        for _ in 0..<3 { request += "3E8\r\n" + String(repeating: "x", count: 1000) + "\r\n" }
        request += "0\r\n\r\n"
        try client.send(request)
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(response.json?["error"] as? String == "payload_too_large")
        #expect(log.all.isEmpty)

        // Under the limit, the same encoding arrives de-chunked.
        let small = try RawHTTPClient(port: server.port)
        try small.send(
            "POST /webhook HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                + "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        #expect(try small.readResponse().status == 200)
        #expect(log.all.map(\.body) == [Data("hello world".utf8)])
        expectNoLiveRequests(server)
    }

    // Containers started with IPv6 disabled have no ::1: the test is then skipped, with this reason.
    @Test(
        "IPv6 loopback [::1]:0 serves requests",
        .enabled(if: HTTPServerTests.hasIPv6Loopback(), "this machine has no IPv6 loopback (::1 cannot be bound)"))
    func ipv6Loopback() throws {
        let log = RequestLog()
        let server = try makeServer(listen: "[::1]:0", log: log)
        defer { server.stop() }
        #expect(server.address?.isIPv6 == true)
        let response = try RawHTTPClient.request(host: "::1", port: server.port, body: Data("{}".utf8))
        #expect(response.status == 200)
        #expect(log.all.first?.remoteAddress == "::1")
        expectNoLiveRequests(server)
    }

    @Test(
        "[::]:0 is dual-stack: IPv4 clients reach it and are reported as IPv4",
        .enabled(if: HTTPServerTests.hasIPv6Loopback(), "this machine has no IPv6 loopback (::1 cannot be bound)"))
    func dualStack() throws {
        let log = RequestLog()
        let server = try makeServer(listen: "[::]:0", log: log)
        defer { server.stop() }
        #expect(try RawHTTPClient.request(host: "127.0.0.1", port: server.port).status == 200)
        #expect(try RawHTTPClient.request(host: "::1", port: server.port).status == 200)
        #expect(log.all.map(\.remoteAddress) == ["127.0.0.1", "::1"])
    }

    @Test("A slow client holding half a request line does not delay a normal request")
    func slowClientDoesNotBlock() throws {
        // One polling thread: if a stalled connection could hold it, the normal request would wait
        // for the 15 s idle timeout.
        let server = try makeServer(connectionTimeout: 15, threadPoolSize: 1)
        defer { server.stop() }
        let slow = try RawHTTPClient(port: server.port)
        try slow.send("POST /webh")
        let slowHeaders = try RawHTTPClient(port: server.port)
        try slowHeaders.send("POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"partial\":")
        usleep(100_000)

        let started = Date()
        let response = try RawHTTPClient.request(port: server.port, body: Data("{}".utf8))
        let elapsed = Date().timeIntervalSince(started)
        #expect(response.status == 200)
        #expect(elapsed < 5, "a normal request took \(elapsed) s next to a stalled one")
        // The stalled requests are still open (their states alive) until they time out.
        #expect(server.requestsInFlight >= 1)
    }

    @Test("A connection idle past connectionTimeout is closed by the server, and its state released")
    func idleConnectionClosed() throws {
        let log = RequestLog()
        let server = try makeServer(connectionTimeout: 1, log: log)
        defer { server.stop() }

        let idle = try RawHTTPClient(port: server.port)
        // A request line and part of the headers: the request's state exists from here on.
        try idle.send("POST /webhook HTTP/1.1\r\nHost: x\r\n")
        let started = Date()
        #expect(try idle.waitForClose())
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed < 8, "closed only after \(elapsed) s")
        let silent = try RawHTTPClient(port: server.port)
        #expect(try silent.waitForClose())
        #expect(log.all.isEmpty)
        expectNoLiveRequests(server)
    }

    @Test("A handler that blocks on one connection does not block a request on another")
    func blockingHandlerUsesThePool() throws {
        let release = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let server = try makeServer(threadPoolSize: 4) { request in
            if request.path == "/slow" {
                entered.signal()
                // Blocks like a database commit would: until /fast has been answered (or 10 s).
                let released = release.wait(timeout: .now() + 10) == .success
                usleep(300_000)
                return .json(200, ["released": .bool(released)])
            }
            release.signal()
            return .json(200, ["fast": true])
        }
        defer { server.stop() }

        let slow = onThread { try RawHTTPClient.request(port: server.port, target: "/slow") }
        #expect(entered.wait(timeout: .now() + 10) == .success)
        let started = Date()
        let fast = try RawHTTPClient.request(port: server.port, target: "/fast")
        let fastElapsed = Date().timeIntervalSince(started)
        #expect(fast.status == 200)
        #expect(fastElapsed < 5)
        let slowResponse = try slow()
        #expect(slowResponse.status == 200)
        #expect(slowResponse.json?["released"] as? Bool == true)
        expectNoLiveRequests(server)
    }

    // MARK: Answers that come later (suspend and resume)

    /// Keeps the responders of requests not answered yet, for the test thread to answer.
    final class HeldResponders: @unchecked Sendable {
        private let lock = NSLock()
        private var held: [String: HTTPResponder] = [:]
        let arrived = DispatchSemaphore(value: 0)

        func hold(_ path: String, _ responder: HTTPResponder) {
            lock.withLock { held[path] = responder }
            arrived.signal()
        }

        func responder(_ path: String) -> HTTPResponder? {
            lock.withLock { held[path] }
        }
    }

    /// A server with ONE polling thread whose handler answers `/later…` only when the test says.
    private func deferringServer(_ held: HeldResponders) throws -> HTTPServer {
        let configuration = HTTPServer.Configuration(listen: "127.0.0.1:0", threadPoolSize: 1)
        return try HTTPServer(
            configuration: configuration,
            answering: { request, responder in
                if request.path.hasPrefix("/later") {
                    held.hold(request.path, responder)
                } else {
                    responder.respond(.json(200, ["now": true]))
                }
            })
    }

    @Test("A request answered later parks its connection, not the thread: others are served meanwhile")
    func answerLater() throws {
        let held = HeldResponders()
        let server = try deferringServer(held)
        defer { server.stop() }
        let port = server.port
        let first = onThread { try RawHTTPClient.request(port: port, target: "/later-1") }
        let second = onThread { try RawHTTPClient.request(port: port, target: "/later-2") }
        #expect(held.arrived.wait(timeout: .now() + 10) == .success)
        #expect(held.arrived.wait(timeout: .now() + 10) == .success)
        // Both wait on the only polling thread, and yet it answers a third request at once.
        let quick = try RawHTTPClient.request(port: port, target: "/now")
        #expect(quick.status == 200)
        // The quick request's state goes a moment after its answer; the two parked ones stay.
        let deadline = Date().addingTimeInterval(30)
        while server.requestsInFlight != 2 && Date() < deadline { usleep(5_000) }
        #expect(server.requestsInFlight == 2)
        // Answered out of order, from this thread; a second answer to the same request is ignored.
        held.responder("/later-2")?.respond(.json(202, ["which": 2]))
        held.responder("/later-2")?.respond(.json(500, ["which": "again"]))
        held.responder("/later-1")?.respond(.json(201, ["which": 1]))
        let (one, two) = (try first(), try second())
        #expect(one.status == 201 && one.json?["which"] as? Int == 1)
        #expect(two.status == 202 && two.json?["which"] as? Int == 2)
        expectNoLiveRequests(server)
    }

    @Test("A keep-alive connection carries on after an answer that came later")
    func answerLaterKeepAlive() throws {
        let held = HeldResponders()
        let server = try deferringServer(held)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let answerer = onThread { () -> Bool in
            guard held.arrived.wait(timeout: .now() + 10) == .success else { return false }
            usleep(100_000)
            held.responder("/later")?.respond(.json(202, ["late": true]))
            return true
        }
        try client.send("GET /later HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try client.readResponse().status == 202)
        #expect(try answerer())
        try client.send("GET /now HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        expectNoLiveRequests(server)
    }

    @Test("stop() waits for an answer that comes within answerTimeout, and it reaches the client")
    func stopWaitsForLateAnswer() throws {
        let held = HeldResponders()
        let server = try deferringServer(held)
        let port = server.port
        let pending = onThread { try RawHTTPClient.request(port: port, target: "/later") }
        #expect(held.arrived.wait(timeout: .now() + 10) == .success)
        let answerer = onThread { () -> Bool in
            usleep(300_000)
            held.responder("/later")?.respond(.json(202, ["stored": true]))
            return true
        }
        server.stop(answerTimeout: 10)
        #expect(try answerer())
        #expect(try pending().status == 202)
        #expect(server.requestsInFlight == 0)
    }

    @Test("stop() answers 503 to a request whose handler never answers, and a late answer is ignored")
    func stopAnswersUnanswered() throws {
        let held = HeldResponders()
        let server = try deferringServer(held)
        let port = server.port
        let pending = onThread { try RawHTTPClient.request(port: port, target: "/later") }
        #expect(held.arrived.wait(timeout: .now() + 10) == .success)
        server.stop(answerTimeout: 0.2)
        let response = try pending()
        #expect(response.status == 503)
        #expect(response.json?["error"] as? String == "shutting_down")
        // The connection is gone; answering now must be harmless.
        held.responder("/later")?.respond(.json(202, ["too": "late"]))
        #expect(server.requestsInFlight == 0)
    }

    @Test("stop() refuses new connections and can be called again")
    func stopRefusesConnections() throws {
        let log = RequestLog()
        let server = try makeServer { request in
            log.record(request)
            return .json(200, ["ok": true])
        }
        let port = server.port
        #expect(try RawHTTPClient.request(port: port).status == 200)
        server.stop()
        // Tests run in parallel, and another one's server may bind the freed port at once: then
        // the connection succeeds, but not to this server, whose handler must see nothing more.
        // (Asserting only that the connection fails made this test flaky.)
        _ = try? RawHTTPClient.request(port: port)
        #expect(log.all.count == 1, "a stopped server took a request")
        server.stop()
        server.stop(drainTimeout: 1)
        #expect(server.requestsInFlight == 0)
    }

    @Test("stop() called from inside the handler answers the request, then stops the server")
    func stopFromHandler() throws {
        // An owner whose deinit stops its server, released by the handler that held its last
        // reference, calls stop() on a libmicrohttpd thread; joining that thread aborted the process.
        final class Box: @unchecked Sendable { var server: HTTPServer? }
        let box = Box()
        let log = RequestLog()
        let server = try makeServer { request in
            log.record(request)
            box.server?.stop()
            return .json(200, ["stopping": true])
        }
        box.server = server
        let port = server.port
        #expect(try RawHTTPClient.request(port: port).status == 200)
        // The stop runs on another thread once the handler returned, with nobody else calling it.
        let deadline = Date().addingTimeInterval(10)
        while server.isRunning && Date() < deadline { usleep(10_000) }
        #expect(!server.isRunning, "the stop asked for inside the handler never happened")
        _ = try? RawHTTPClient.request(port: port)
        #expect(log.all.count == 1, "a stopped server took a request")
        #expect(server.requestsInFlight == 0)
    }

    @Test("a server whose last reference goes in its own handler stops after the answer, without touching itself freed")
    func releasedInsideHandler() throws {
        // The server's deinit runs on the handler's thread, where the stop cannot join; the stop it
        // hands to another thread once captured the deinitialising server itself, a use after free:
        // Swift's runtime said "deallocated with non-zero retain count" and the test process then
        // died on a libmicrohttpd thread (3 of 3 runs, with and without AddressSanitizer).
        final class Box: @unchecked Sendable {
            let lock = NSLock()
            var server: HTTPServer?
            func take() -> HTTPServer? {
                lock.withLock {
                    let taken = server
                    server = nil
                    return taken
                }
            }
        }
        let box = Box()
        var port = 0
        do {
            let server = try makeServer { _ in
                // The last reference, dropped here on libmicrohttpd's thread.
                _ = box.take()
                return .json(200, ["released": true])
            }
            port = server.port
            box.lock.withLock { box.server = server }
        }
        #expect(try RawHTTPClient.request(port: port).status == 200)
        // Stopped once the answer is out: the port refuses connections.
        let deadline = Date().addingTimeInterval(10)
        var refused = false
        while !refused && Date() < deadline {
            refused = (try? RawHTTPClient.request(port: port)) == nil
            if !refused { usleep(20_000) }
        }
        #expect(refused, "the server released inside its handler still takes connections")
    }

    @Test("stop(drainTimeout:) lets a request in its handler finish")
    func stopDrains() throws {
        let entered = DispatchSemaphore(value: 0)
        let server = try makeServer { _ in
            entered.signal()
            usleep(300_000)
            return .json(202, ["stored": true])
        }
        let pending = onThread { try RawHTTPClient.request(port: server.port) }
        #expect(entered.wait(timeout: .now() + 10) == .success)
        server.stop(drainTimeout: 5)
        #expect(try pending().status == 202)
        #expect(server.requestsInFlight == 0)
    }

    @Test("A client that disconnects mid-body releases its state; the handler never runs")
    func abortedUpload() throws {
        let log = RequestLog()
        let server = try makeServer(log: log)
        defer { server.stop() }
        do {
            let client = try RawHTTPClient(port: server.port)
            try client.send("POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"half\":")
            usleep(100_000)
        }
        expectNoLiveRequests(server)
        #expect(log.all.isEmpty)
    }

    @Test("Headers up to maxHeaderBytes pass; over it the server answers 431; far over it libmicrohttpd does")
    func headerLimit() throws {
        let limit = 32 * 1024
        let log = RequestLog()
        let server = try makeServer(maxHeaderBytes: limit, log: log) { request in
            // A response with a sizeable header block: it must still fit the connection's pool.
            HTTPResponse(
                status: 200, headers: [("X-Padding", String(repeating: "p", count: 2000))],
                body: Data(count: request.body.count))
        }
        defer { server.stop() }

        // Request line (~30 bytes) + Host + Connection + Content-Length + X-Big stay under 32 KiB.
        let fits = String(repeating: "a", count: limit - 200)
        let ok = try RawHTTPClient.request(port: server.port, headers: [("X-Big", fits)], body: Data(count: 1 << 20))
        #expect(ok.status == 200)
        #expect(ok.body.count == 1 << 20)
        #expect(ok.headers["x-padding"]?.count == 2000)
        #expect(log.all.first?.headers["x-big"]?.count == fits.count)

        let over = try RawHTTPClient.request(
            port: server.port, headers: [("X-Big", fits + String(repeating: "a", count: 400))])
        #expect(over.status == 431)
        #expect(over.json?["error"] as? String == "headers_too_large")
        #expect(over.json?["limit_bytes"] as? Int == limit)

        // Beyond libmicrohttpd's pool: its own 431 (an HTML page), or a closed connection if the
        // client is still sending when it gives up.
        let client = try RawHTTPClient(port: server.port)
        try? client.send(
            "POST /webhook HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "b", count: 200 * 1024))\r\n\r\n")
        if let refused = try? client.readResponse() {
            #expect(refused.status == 431)
        }
        #expect(log.all.count == 1)
        expectNoLiveRequests(server)
    }

    @Test("Bad configuration is refused with a reason that names the input")
    func configurationErrors() {
        #expect(throws: HTTPServerError.invalidListenAddress(text: "nowhere", reason: "expected HOST:PORT")) {
            _ = try HTTPServer(configuration: .init(listen: "nowhere")) { _ in HTTPResponse(status: 200) }
        }
        #expect(throws: HTTPServerError.invalidConfiguration("threadPoolSize must be 1 to 256")) {
            _ = try HTTPServer(configuration: .init(listen: "127.0.0.1:0", threadPoolSize: 0)) { _ in
                HTTPResponse(status: 200)
            }
        }
    }

    @Test("A port in use is a startFailed error naming the address")
    func portInUse() throws {
        let first = try makeServer()
        defer { first.stop() }
        do {
            _ = try makeServer(listen: "127.0.0.1:\(first.port)")
            Issue.record("a second server bound the same port")
        } catch {
            guard let error = error as? HTTPServerError, case .startFailed(let address, _, _) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(address == "127.0.0.1:\(first.port)")
            #expect(error.description.contains("127.0.0.1:\(first.port)"))
        }
    }

    @Test("An already listening socket (systemd socket activation) is served")
    func listenFileDescriptor() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let server = try HTTPServer(
            configuration: .init(listen: "ignored", listenFileDescriptor: fd)
        ) { _ in .json(200, ["socket": "activated"]) }
        defer { server.stop() }
        #expect(server.port == port)
        #expect(server.address == nil)
        #expect(try RawHTTPClient.request(port: port).json?["socket"] as? String == "activated")
    }

    /// Whether `::1` can be bound here (some containers run without IPv6).
    static func hasIPv6Loopback() -> Bool {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0
            }
        }
    }
}
