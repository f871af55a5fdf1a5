import BridgeCore
import Foundation
import Testing

@testable import WebhookServer

#if canImport(Glibc)
    import Glibc
#endif

/// The budget for body bytes held by requests not yet handed to the handler (not yet verified):
/// whatever the clients send, the server holds at most that much, answers 503 with `Retry-After`
/// past it, and gives it all back.
@Suite("unverified body budget", .serialized, .timeLimit(.minutes(1)))
struct BodyBudgetTests {
    final class Refusals: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }

    static func server(budget: Int, refusals: Refusals) throws -> HTTPServer {
        let configuration = HTTPServer.Configuration(
            listen: "127.0.0.1:0", maxBodyBytes: 1 << 20, threadPoolSize: 2, unverifiedBodyBudget: budget,
            onBudgetRefusal: { refusals.add() })
        return try HTTPServer(configuration: configuration) { request in
            .json(200, ["bytes": .number(Double(request.body.count))])
        }
    }

    static func post(port: Int, body: Data) throws -> RawHTTPClient.Response {
        let client = try RawHTTPClient(port: port)
        try client.send("POST /webhook HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(body.count)\r\n\r\n")
        try client.send(body)
        return try client.readResponse()
    }

    /// Waits until `condition` holds: the server updates its counts on its own threads. Up to 30 s,
    /// because a loaded CI machine can starve those threads for seconds (it did, at 5 s).
    static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while !condition() && Date() < deadline { usleep(5_000) }
        return condition()
    }

    @Test("a declared body larger than the budget is 503 with Retry-After before it is read")
    func declaredOverBudget() throws {
        let refusals = Refusals()
        let server = try Self.server(budget: 64 * 1024, refusals: refusals)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST /webhook HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 503)
        #expect(response.headers["retry-after"] == "5")
        #expect(refusals.value == 1)
        // Within the budget, the same server takes it.
        #expect(try Self.post(port: server.port, body: Data(count: 60_000)).status == 200)
        #expect(Self.eventually { server.unverifiedBodyBytes == 0 })
    }

    @Test("bodies held by uploads in progress count together: the one that does not fit waits for the others")
    func concurrentUploads() throws {
        let refusals = Refusals()
        let server = try Self.server(budget: 100_000, refusals: refusals)
        defer { server.stop() }
        // A sends 80 KB of a 90 KB body and stalls: the server holds it, unverified.
        let stalled = try RawHTTPClient(port: server.port)
        try stalled.send("POST /webhook HTTP/1.1\r\nHost: localhost\r\nContent-Length: 90000\r\n\r\n")
        try stalled.send(Data(count: 80_000))
        #expect(Self.eventually { server.unverifiedBodyBytes >= 80_000 })
        #expect(server.unverifiedBodyBytes <= 100_000)

        // B's 50 KB does not fit next to it.
        let refused = try Self.post(port: server.port, body: Data(count: 50_000))
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] == "5")
        #expect(refusals.value == 1)

        // A finishes; its bytes go to the handler and leave the budget, and B fits again.
        try stalled.send(Data(count: 10_000))
        let finished = try stalled.readResponse()
        #expect(finished.status == 200)
        #expect(finished.json?["bytes"] as? Int == 90_000)
        #expect(Self.eventually { server.unverifiedBodyBytes == 0 })
        #expect(try Self.post(port: server.port, body: Data(count: 50_000)).status == 200)
    }

    @Test("a chunked upload that outgrows the budget is read to its end, dropped and answered 503")
    func chunkedOverBudget() throws {
        let refusals = Refusals()
        let server = try Self.server(budget: 32 * 1024, refusals: refusals)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST /webhook HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = Data(count: 16 * 1024)
        for _ in 0..<4 {
            try client.send(String(chunk.count, radix: 16) + "\r\n")
            try client.send(chunk)
            try client.send("\r\n")
        }
        try client.send("0\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 503)
        #expect(refusals.value == 1)
        #expect(Self.eventually { server.unverifiedBodyBytes == 0 })
    }

    @Test("a client that goes away mid-upload gives its share back")
    func abandonedUpload() throws {
        let refusals = Refusals()
        let server = try Self.server(budget: 100_000, refusals: refusals)
        defer { server.stop() }
        do {
            let client = try RawHTTPClient(port: server.port)
            try client.send("POST /webhook HTTP/1.1\r\nHost: localhost\r\nContent-Length: 90000\r\n\r\n")
            try client.send(Data(count: 40_000))
            #expect(Self.eventually { server.unverifiedBodyBytes >= 40_000 })
        }
        // The client closed its socket when it went out of scope.
        #expect(Self.eventually { server.unverifiedBodyBytes == 0 })
        #expect(refusals.value == 0)
    }

    @Test("no budget (0) holds whatever the body limit allows")
    func unlimited() throws {
        let refusals = Refusals()
        let server = try Self.server(budget: 0, refusals: refusals)
        defer { server.stop() }
        #expect(try Self.post(port: server.port, body: Data(count: 900_000)).status == 200)
        #expect(refusals.value == 0)
    }
}
