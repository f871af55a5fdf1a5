import BridgeCore
import BridgeDaemon
import BridgeTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `github.request_deadline` reaches the webhook listener: a client trickling its request past it
/// is closed and counted in `/metrics`, and the listener goes on answering.
@Suite("Request deadline end to end", .serialized, .timeLimit(.minutes(2)))
struct RequestDeadlineEndToEndTests {
    @Test("a delivery trickled past github.request_deadline is closed and counted; /healthz still answers")
    func slowDeliveryClosed() async throws {
        let directory = try ScratchDirectory()
        let json = """
            {"listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "\(directory.path("bridge.sqlite"))",
             "github": {"webhook_secrets": ["deadline-secret-0123456789"], "request_deadline": "1s"}}
            """
        let configuration = try BridgeConfiguration(json: Data(json.utf8))
        #expect(configuration.requestDeadline == 1)
        #expect(ConfigurationLoader.describe(configuration)["github"]?["request_deadline"] == 1)
        let daemon = try await offPool { try Daemon.start(configuration: configuration, logger: LogCapture().logger) }
        let port = daemon.port
        let counters = daemon.counters
        let closed = try await offPool { () -> Bool in
            let client = try HTTPTestClient(port: port, timeout: 30)
            try client.send("POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n{\"a\":")
            // One byte every 100 ms, never idle, until the server shuts the connection.
            for _ in 0..<300 {
                usleep(100_000)
                var byte = UInt8(ascii: " ")
                if Glibc.send(client.fd, &byte, 1, Int32(MSG_NOSIGNAL)) != 1 { return true }
            }
            return false
        }
        #expect(closed)
        #expect(try await eventually(timeout: 30) { counters.value("request_deadline_closes_total") == 1 })
        #expect(counters.prometheusText(gauges: []).contains("request_deadline_closes_total"))
        let health = try await offPool { try HTTPTestClient.request(port: port, method: "GET", target: "/healthz") }
        #expect(health.status == 200)
        await daemon.shutdown()
    }
}
