import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeDaemon

/// The leader-only writes of recovery and alerts carry the fence: written by an instance whose
/// epoch is no longer the leadership's, they change nothing and the instance steps down. The
/// takeover is made by hand (the leadership row's epoch moved on), so the write meets the fence
/// whatever the timing.
@Suite("A deposed leader's writes", .serialized, .timeLimit(.minutes(2)))
struct DeposedLeaderWriteTests {
    static func delivery(_ guid: String, id: Int) -> HookDelivery {
        HookDelivery(
            id: id, guid: guid, deliveredAt: Date().timeIntervalSince1970 - 60, redelivery: false, statusCode: 0,
            event: "workflow_job", action: "completed")
    }

    @Test("recovery records and an alert's answer written after another instance took over change nothing")
    func deposedWritesChangeNothing() async throws {
        let uri = try await PostgresServer.makeSharedDatabase()
        let database = try BridgeDatabase(location: .postgresql(uri: uri))
        let admin = try PostgresConnection(uri: uri, applicationName: "deposed leader test")
        defer { admin.close() }
        _ = try admin.run(
            "INSERT INTO leadership (singleton, epoch, holder, since, heartbeat_at) VALUES (true, 1, 'test:1', 0, 0)")
        let now = Date().timeIntervalSince1970
        // Two pending alerts: one answered while leading, one after the takeover.
        var rows = EngineRows()
        let run = RunKey(repository: "acme/widgets", runID: 77, attempt: 1)
        rows.alerts = [
            PlannedAlert(
                run: run, reason: .failure, body: ["title": "CI failed \u{202E}\u{0}🚀"], activitySlug: nil),
            PlannedAlert(
                run: RunKey(repository: "acme/widgets", runID: 78, attempt: 1), reason: .failure,
                body: ["title": "CI failed"], activitySlug: nil),
        ]
        try database.write { try $0.save(rows, at: now) }
        let alerts = try database.dueAlerts(at: now + 1)
        #expect(alerts.count == 2)

        // The service owns `database` from here; the test reads on a connection of its own.
        let reader = try BridgeDatabase(location: .postgresql(uri: uri), readOnly: true)
        let lines = LineLog()
        let service = BridgeService(
            database: database, engine: BridgeEngine(), configuration: BridgeConfiguration(),
            logger: Logger(label: "test", minimumLevel: .debug, sink: { lines.append($0) }))
        let ledger = RecoveryLedger(service: service, log: Logger(label: "test", sink: { lines.append($0) }))
        service.roleChanged(to: .leading(epoch: 1))
        // Queued behind the role change on the service's queue: it has taken the lead.
        #expect(await service.leaderEpoch == 1)

        // Leading: each write goes through.
        let hook = "repos/acme/widgets/hooks/1"
        #expect(await ledger.recordRecoveryRequest(Self.delivery("guid-led", id: 1), hook: hook, at: now))
        let sent = NotificationAnswer.sent(status: 201, id: 9, delivery: "all", reason: nil)
        await service.completeAlert(alerts[0], answer: sent, dryRun: false, at: now)
        #expect(try reader.alerts(repository: "acme/widgets", runID: 77).first?.state == .sent)

        // Another instance takes over: the leadership's epoch moves on.
        _ = try admin.run("UPDATE leadership SET epoch = 2, holder = 'other:2'")
        #expect(!(await ledger.recordRecoveryRequest(Self.delivery("guid-deposed", id: 2), hook: hook, at: now)))
        #expect(try reader.recoveryRequests(["guid-deposed"]).isEmpty, "a deposed leader counted a request")
        #expect(await service.leaderEpoch == nil, "it stepped down")

        // Deposed already: still nothing, whichever write it is.
        await ledger.recordSweep(hook: hook, examinedThrough: now, at: now)
        #expect(try reader.examinedThrough(hook: hook) == nil, "a deposed leader recorded a sweep")
        await ledger.recordGivenUp([Self.delivery("guid-led", id: 1)], at: now)
        #expect(try reader.recoveryRequests(["guid-led"])["guid-led"]?.givenUpAt == nil)
        await service.completeAlert(alerts[1], answer: sent, dryRun: false, at: now)
        let untouched = try #require(try reader.alerts(repository: "acme/widgets", runID: 78).first)
        #expect(untouched.state == .pending, "a deposed leader's answer recorded")
        #expect(untouched.notificationID == nil)
        #expect(try reader.recoveryRequests(["guid-led"])["guid-led"]?.requests == 1)
        #expect(lines.all.contains { $0.contains("found another instance leading") })
        #expect(!lines.all.contains { $0.contains("\"level\":\"error\"") }, "\(lines.all)")
    }
}
