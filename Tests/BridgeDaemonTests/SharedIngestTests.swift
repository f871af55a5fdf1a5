import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// The answers of an instance on PostgreSQL, the leader too: each delivery is committed for the
/// leader before its 2xx (`queued`), a redelivery is a duplicate, a malformed body a 400, and the
/// leader applies what was committed afterwards, in order, leaving nothing waiting.
@Suite("Shared database: answers", .serialized, .timeLimit(.minutes(2)))
struct SharedIngestTests {
    @Test("the leader answers queued once committed, and applies afterwards")
    func leaderAnswersQueued() async throws {
        let uri = try await PostgresServer.makeSharedDatabase()
        let daemon = try await RunningDaemon.start(TestConfiguration(database: uri))
        defer { Task { try? await daemon.stop() } }
        let adminPort = daemon.daemon.adminPort
        #expect(
            await HighAvailabilityRecoveryTests.within(15) {
                let metrics = (try? await AlertEndToEndTests.get("/metrics", port: adminPort)) ?? ""
                return metrics.contains("pushward_bridge_leader 1\n")
            })

        let script = RunScript(start: Date().timeIntervalSince1970 - 600)
        let events = script.deliveries(waves: [[RunScript.Job("build (\u{202E}evil\u{0})", duration: 20)]])
        for (index, event) in events.enumerated() {
            let (name, body) = PayloadEncoder.encode(event)
            let answer = try await daemon.deliver(event: name, id: "shared-\(index)", body: body)
            #expect(answer.status == 202, "\(index): \(answer.text)")
            #expect(answer.json?["status"] == "queued", "\(index): \(answer.text)")
        }
        let (name, body) = PayloadEncoder.encode(events[0])
        let again = try await daemon.deliver(event: name, id: "shared-0", body: body)
        #expect(again.status == 200 && again.json?["status"] == "duplicate", "\(again.text)")
        let malformed = try await daemon.deliver(
            event: "workflow_job", id: "shared-bad", body: Data(#"{"action": 5}"#.utf8))
        #expect(malformed.status == 400 && malformed.json?["error"] == "malformed_payload", "\(malformed.text)")
        // GitHub redelivers it (the same id): a duplicate like any other, not a failed commit.
        let redelivered = try await daemon.deliver(
            event: "workflow_job", id: "shared-bad", body: Data(#"{"action": 5}"#.utf8))
        #expect(redelivered.status == 200 && redelivered.json?["status"] == "duplicate", "\(redelivered.text)")

        let runID = script.runID
        let read = { @Sendable () throws -> BridgeDatabase in
            try BridgeDatabase(location: .postgresql(uri: uri), readOnly: true)
        }
        #expect(
            try await eventually(timeout: 15) {
                let database = try read()
                return try database.waitingDeliveries().isEmpty
                    && database.listRuns(limit: 5).contains { $0.key.runID == runID && $0.status == "completed" }
            }, "every delivery applied and the run finished")
        let database = try read()
        for index in events.indices {
            let stored = try #require(try database.delivery(id: "shared-\(index)"))
            #expect(stored.outcome == .applied, "\(index): \(stored.outcome) \(stored.reason ?? "")")
            #expect(stored.runID == runID)
        }
        #expect(try database.delivery(id: "shared-0")?.duplicates == 1)
        #expect(try database.delivery(id: "shared-bad")?.outcome == .rejected)
        #expect(try database.delivery(id: "shared-bad")?.duplicates == 1)

        // A second instance started with a run in flight follows and holds none of it: the
        // leader's engine is the one that applies.
        let inFlight = RunScript(runID: 9_100, start: Date().timeIntervalSince1970 - 60, firstJobID: 60_000)
        for (index, event) in inFlight.deliveries(waves: [[RunScript.Job("lint")]], complete: false).enumerated() {
            let (name, body) = PayloadEncoder.encode(event)
            #expect(try await daemon.deliver(event: name, id: "in-flight-\(index)", body: body).status == 202)
        }
        #expect(try await eventually(timeout: 15) { try read().waitingDeliveries().isEmpty })
        let follower = try await RunningDaemon.start(TestConfiguration(database: uri))
        defer { Task { try? await follower.stop() } }
        let followerMetrics = try await AlertEndToEndTests.get("/metrics", port: follower.daemon.adminPort)
        #expect(followerMetrics.contains("pushward_bridge_leader 0\n"))
        #expect(followerMetrics.contains("pushward_bridge_runs_held 0\n"), "\(followerMetrics.prefix(2_000))")
        let leaderMetrics = try await AlertEndToEndTests.get("/metrics", port: adminPort)
        #expect(!leaderMetrics.contains("pushward_bridge_runs_held 0\n"), "the leader holds the run in flight")
    }

    @Test("a follower leaves the engine it loaded alone: no write, no error, however old its runs grow")
    func followerForgetsNothing() async throws {
        let uri = try await PostgresServer.makeSharedDatabase()
        let database = try BridgeDatabase(location: .postgresql(uri: uri))
        let start = Date().timeIntervalSince1970
        var engine = BridgeEngine()
        let script = RunScript(start: start)
        for event in script.deliveries(waves: [[RunScript.Job("build")]], complete: false) {
            _ = engine.receive(event, at: start)
        }
        #expect(!engine.runs.isEmpty, "the run is in the engine, in progress")
        let lines = LineLog()
        let service = BridgeService(
            database: database, engine: engine, configuration: BridgeConfiguration(),
            logger: Logger(label: "test", minimumLevel: .debug, sink: { lines.append($0) }))
        // Never led: every run it holds is past GitHub's longest run, which a leader would release.
        await service.forgetFinished(at: start + BridgeEngine.abandonedAfter + 86_400)
        await service.forgetFinished(at: start + BridgeEngine.abandonedAfter + 86_430)
        #expect(!lines.all.contains { $0.contains("\"level\":\"error\"") }, "\(lines.all)")
        let reader = try BridgeDatabase(location: .postgresql(uri: uri), readOnly: true)
        #expect(try reader.listRuns(limit: 5).isEmpty, "a follower wrote what only the leader writes")
    }
}
