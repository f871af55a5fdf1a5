import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// The `alerts` table: one row per run and reason whatever is planned again, the sender's queue,
/// and retention taking a run's alerts with it.
@Suite("alert store", .onEachEngine)
struct AlertStoreTests {
    let database: BridgeDatabase

    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "alert-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        database = try TestStore.open(in: directory.path)
    }

    static func planned(_ run: RunKey, _ reason: AlertReason, title: String = "t") -> PlannedAlert {
        PlannedAlert(run: run, reason: reason, body: ["title": .string(title), "body": "b"], activitySlug: "gh-1")
    }

    func save(_ alerts: [PlannedAlert], at now: UnixTime) throws {
        var rows = EngineRows()
        rows.alerts = alerts
        try database.write { try $0.save(rows, at: now) }
    }

    @Test("planned again (redelivery, a re-run's attempt, a restart) it stays one row, the first")
    func oncePerRunAndReason() throws {
        let first = RunKey(repository: "acme/widgets", runID: 1, attempt: 1)
        let rerun = RunKey(repository: "acme/widgets", runID: 1, attempt: 2)
        try save([Self.planned(first, .failure, title: "first")], at: 100)
        try save(
            [Self.planned(first, .failure, title: "again"), Self.planned(rerun, .failure, title: "re-run")], at: 110)
        try save([Self.planned(rerun, .fixed)], at: 120)
        let rows = try database.alerts(repository: "acme/widgets", runID: 1)
        #expect(rows.map(\.reason) == [.failure, .fixed])
        #expect(rows.first?.title == "first")
        #expect(rows.first?.run == first)
        #expect(rows.allSatisfy { $0.state == .pending && $0.attempts == 0 })
    }

    @Test("the queue: due by time, an attempt counted before sending, sent and failed leave it")
    func queue() throws {
        let a = RunKey(repository: "acme/widgets", runID: 1, attempt: 1)
        let b = RunKey(repository: "acme/widgets", runID: 2, attempt: 1)
        let c = RunKey(repository: "acme/widgets", runID: 3, attempt: 1)
        try save([Self.planned(a, .failure), Self.planned(b, .failure), Self.planned(c, .failure)], at: 100)
        var due = try database.dueAlerts(at: 100)
        #expect(due.map(\.run.runID) == [1, 2, 3])
        try database.startAlertAttempt(due[0].id, at: 101)
        try database.finishAlertAttempt(
            due[0].id, state: .sent, status: 201, detail: nil, notificationID: 77, delivery: "all", at: 102)
        try database.startAlertAttempt(due[1].id, at: 101)
        try database.finishAlertAttempt(
            due[1].id, state: .pending, status: nil, detail: "connection refused", nextAttemptAt: 200, at: 102)
        try database.startAlertAttempt(due[2].id, at: 101)
        try database.finishAlertAttempt(
            due[2].id, state: .pending, status: 422, detail: "not found", nextAttemptAt: 102,
            clearActivity: true, at: 102)
        due = try database.dueAlerts(at: 150)
        #expect(due.map(\.run.runID) == [3])
        #expect(due.first?.activitySlug == nil, "the card is no longer linked")
        #expect(try database.nextAlertDue() == 102)
        let sent = try #require(try database.alerts(repository: "acme/widgets", runID: 1).first)
        #expect(sent.state == .sent && sent.notificationID == 77 && sent.sentAt == 102 && sent.attempts == 1)
        let waiting = try #require(try database.alerts(repository: "acme/widgets", runID: 2).first)
        #expect(waiting.detail == "connection refused" && waiting.nextAttemptAt == 200)
    }
}
