import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Synchronization
import Testing

/// The service's retention calls: one batch per table per call, `true` while work is left, and
/// one log line for the whole pass.
@Suite("retention through the service")
struct RetentionServiceTests {
    @Test("pruneRetention says whether work is left, and logs one line per pass with the counts")
    func passes() async throws {
        let directory = try ScratchDirectory()
        let database = try BridgeDatabase(path: directory.path("bridge.sqlite"))
        let now = Date().timeIntervalSince1970
        let old = now - 40 * 86_400
        try database.connection.transaction {
            for index in 0..<450 {
                try database.insert(
                    DeliveryRecord(
                        id: "old-\(index)", hookID: "1", event: "ping", action: nil, receivedAt: old,
                        repository: nil, runID: nil, runAttempt: nil, outcome: .ignored, reason: "ping",
                        contentType: "application/json", payload: nil, payloadBytes: 0))
            }
            try database.insert(
                DeliveryRecord(
                    id: "recent", hookID: "1", event: "ping", action: nil, receivedAt: now - 86_400,
                    repository: nil, runID: nil, runAttempt: nil, outcome: .ignored, reason: "ping",
                    contentType: "application/json", payload: nil, payloadBytes: 0))
        }
        let lines = Mutex<[String]>([])
        let logger = Logger(label: "test", minimumLevel: .debug, sink: { line in lines.withLock { $0.append(line) } })
        let configuration = BridgeConfiguration()
        let engine = try database.loadEngine(configuration: configuration.engineConfiguration, at: now)
        let service = BridgeService(database: database, engine: engine, configuration: configuration, logger: logger)

        // 450 rows in batches of 200: two full batches, then the rest.
        #expect(await service.pruneRetention(at: now))
        #expect(await service.pruneRetention(at: now))
        #expect(await !service.pruneRetention(at: now))
        let passLines = lines.withLock { $0 }.filter { $0.contains("retention pass done") }
        #expect(passLines.count == 1)
        let line = try JSONValue(parsing: Data(try #require(passLines.first).utf8))
        #expect(line["level"] == "info")
        #expect(line["retention.deliveries"] == 450)
        #expect(line["retention.runs"] == 0)
        let reader = try BridgeDatabase(path: directory.path("bridge.sqlite"), readOnly: true)
        #expect(try reader.listDeliveries(limit: 1_000).map(\.id) == ["recent"])

        // The next pass has nothing to do: one call, logged at debug.
        #expect(await !service.pruneRetention(at: now + 600))
        let later = lines.withLock { $0 }.filter { $0.contains("retention pass done") }
        #expect(later.count == 2)
        #expect(try JSONValue(parsing: Data(try #require(later.last).utf8))["level"] == "debug")
    }
}
