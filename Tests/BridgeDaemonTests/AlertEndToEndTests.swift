import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Alerts through the whole daemon over real HTTP, against the fake PushWard (which validates
/// `POST /notifications` as the contract says and 422s an unknown `activity_slug`).
@Suite("Alerts end to end", .serialized, .timeLimit(.minutes(3)))
struct AlertEndToEndTests {
    typealias Bridge = DispatchEndToEndTests.Bridge
    static let alertsOn = #""alerts": {},"#
    static let failing: [[RunScript.Job]] = [
        [RunScript.Job("lint", duration: 5)], [RunScript.Job("test (linux)", duration: 10, conclusion: "failure")],
    ]
    static let passing: [[RunScript.Job]] = [[RunScript.Job("lint", duration: 5)], [RunScript.Job("test (linux)")]]

    static func script(_ runID: Int, ago: Double) -> RunScript {
        RunScript(runID: runID, runNumber: runID, start: Date().timeIntervalSince1970 - ago, firstJobID: runID * 100)
    }

    static func alerts(_ bridge: Bridge, runID: Int) throws -> [AlertRecord] {
        try BridgeDatabase(path: bridge.databasePath, readOnly: true).alerts(repository: "acme/widgets", runID: runID)
    }

    @Test("a failing run alerts once, linked to its card; its fix alerts 'fixed' with the same collapse id")
    func failureThenFix() async throws {
        let fake = try FakePushWardServer()
        let bridge = try Bridge(fake: fake, topLevel: Self.alertsOn)
        let failed = Self.script(1, ago: 900)
        for event in failed.deliveries(waves: Self.failing) { #expect(try await bridge.deliver(event) == 202) }
        #expect(await DispatchEndToEndTests.eventually { fake.acceptedNotifications.count == 1 })
        // The same completed delivery again, and a new delivery id with the same content.
        let completed = failed.run("completed", at: 40, conclusion: "failure")
        try await bridge.deliver(completed, id: "repeat-1")
        try await bridge.deliver(completed, id: "repeat-1")
        try await bridge.deliver(completed, id: "repeat-2")
        let fixing = Self.script(2, ago: 600)
        for event in fixing.deliveries(waves: Self.passing) { #expect(try await bridge.deliver(event) == 202) }
        #expect(await DispatchEndToEndTests.eventually { fake.acceptedNotifications.count == 2 })
        try await Task.sleep(for: .milliseconds(500))
        await bridge.daemon.shutdown()

        let notifications = fake.acceptedNotifications
        #expect(notifications.count == 2, "one failure and one fix, nothing twice")
        let failure = try #require(notifications.first?.body)
        let fix = try #require(notifications.last?.body)
        #expect(failure["title"] == "acme/widgets · CI failed")
        #expect(failure["body"]?.stringValue?.hasPrefix("test failed at “Run”\non main") == true)
        #expect(failure["activity_slug"] == .string(DispatchEndToEndTests.slug))
        #expect(fix["title"] == "acme/widgets · CI fixed")
        #expect(fix["collapse_id"] == failure["collapse_id"])
        #expect(fix["thread_id"] == failure["thread_id"])
        #expect(fake.violations.isEmpty, "\(fake.violations)")
        let recorded = try Self.alerts(bridge, runID: 1)
        #expect(recorded.map(\.state) == [.sent])
        #expect(recorded.first?.notificationID == 1)
        #expect(recorded.first?.delivery == "all")
        #expect(bridge.logs.all.contains { $0.contains("\"alert sent\"") })
    }

    static func get(_ path: String, port: Int) async throws -> String {
        let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        return String(decoding: data, as: UTF8.self)
    }

    @Test("the run's alerts in /api/runs/{id}, on the status page (escaped), and counted in /metrics")
    func seenEverywhere() async throws {
        let fake = try FakePushWardServer()
        let bridge = try Bridge(fake: fake, topLevel: Self.alertsOn)
        var script = Self.script(8, ago: 900)
        script.workflow = "CI <img src=x onerror=alert(1)>"
        for event in script.deliveries(waves: Self.failing) { try await bridge.deliver(event) }
        #expect(await DispatchEndToEndTests.eventually { (try? Self.alerts(bridge, runID: 8).first?.state) == .sent })
        let port = bridge.daemon.adminPort
        let document = try JSONValue(parsing: Data(try await Self.get("/api/runs/8", port: port).utf8))
        let alert = try #require(document.arrayValue?.first?["alerts"]?.arrayValue?.first)
        #expect(alert["reason"] == "failure")
        #expect(alert["state"] == "sent")
        #expect(alert["audience"] == "everyone the key reaches")
        #expect(alert["delivery"] == "all")
        let page = try await Self.get("/", port: port)
        #expect(page.contains("data-reason=\"failure\" data-state=\"sent\""))
        #expect(page.contains("CI &lt;img src=x onerror=alert(1)&gt; failed”"))
        #expect(!page.contains("<img src=x"))
        let metrics = try await Self.get("/metrics", port: port)
        #expect(metrics.contains(#"alerts_total{outcome="sent",reason="failure"} 1"#), "\(metrics)")
        await bridge.daemon.shutdown()
    }

    @Test("a cancelled run, and every run with alerts off, send no notification")
    func quiet() async throws {
        let fake = try FakePushWardServer()
        let bridge = try Bridge(fake: fake, topLevel: Self.alertsOn)
        for event in Self.script(3, ago: 900).deliveries(waves: Self.failing, conclusion: "cancelled") {
            try await bridge.deliver(event)
        }
        #expect(await DispatchEndToEndTests.eventually { DispatchEndToEndTests.finalCard(fake)?.state == "ended" })
        await bridge.daemon.shutdown()
        let off = try FakePushWardServer()
        let plain = try Bridge(fake: off)
        for event in Self.script(4, ago: 900).deliveries(waves: Self.failing) { try await plain.deliver(event) }
        #expect(await DispatchEndToEndTests.eventually { DispatchEndToEndTests.finalCard(off)?.state == "ended" })
        await plain.daemon.shutdown()
        #expect(fake.acceptedNotifications.isEmpty)
        #expect(off.acceptedNotifications.isEmpty)
        #expect(!fake.requests.contains { $0.path == "/notifications" })
        #expect(try Self.alerts(bridge, runID: 3).isEmpty)
    }

    @Test("a 429 quota.exceeded for notifications: alerts wait, said once; the card still ends")
    func notificationQuota() async throws {
        let fake = try FakePushWardServer()
        fake.setFault { method, path, _ in
            method == "POST" && path == "/notifications"
                ? .status(
                    429, code: "quota.exceeded", detail: "quota exceeded for notifications", resetAt: 4_102_444_800)
                : nil
        }
        let bridge = try Bridge(fake: fake, topLevel: Self.alertsOn)
        for event in Self.script(5, ago: 900).deliveries(waves: Self.failing) { try await bridge.deliver(event) }
        #expect(await DispatchEndToEndTests.eventually { DispatchEndToEndTests.finalCard(fake)?.state == "ended" })
        #expect(await DispatchEndToEndTests.eventually { fake.requests.contains { $0.path == "/notifications" } })
        try await Task.sleep(for: .milliseconds(300))
        await bridge.daemon.shutdown()
        #expect(fake.acceptedNotifications.isEmpty)
        #expect(fake.requests.filter { $0.path == "/notifications" }.count == 1, "paused, not retried in a loop")
        let recorded = try #require(try Self.alerts(bridge, runID: 5).first)
        #expect(recorded.state == .pending)
        #expect(recorded.detail?.contains("quota.exceeded") == true)
        #expect(bridge.logs.all.filter { $0.contains("\"alerts paused; activity cards go on\"") }.count == 1)
    }

    @Test("GET /auth/me says the notification quota is spent: no POST is wasted, the alert waits")
    func notificationQuotaFromUsage() async throws {
        let fake = try FakePushWardServer()
        fake.setNotificationQuota(limit: 500, used: 500)
        let bridge = try Bridge(fake: fake, topLevel: Self.alertsOn)
        #expect(await DispatchEndToEndTests.eventually { bridge.logs.all.contains { $0.contains("alerts paused") } })
        for event in Self.script(9, ago: 900).deliveries(waves: Self.failing) { try await bridge.deliver(event) }
        #expect(await DispatchEndToEndTests.eventually { DispatchEndToEndTests.finalCard(fake)?.state == "ended" })
        try await Task.sleep(for: .milliseconds(300))
        let metrics = try await Self.get("/metrics", port: bridge.daemon.adminPort)
        await bridge.daemon.shutdown()
        #expect(metrics.contains("budget_notifications_used 500"))
        #expect(metrics.contains("budget_notifications_limit 500"))
        #expect(!fake.requests.contains { $0.path == "/notifications" })
        #expect(try Self.alerts(bridge, runID: 9).first?.state == .pending)
        #expect(bridge.logs.all.contains { $0.contains("the notification quota is spent (500 of 500)") })
    }

    @Test("PushWard does not know the slug (the card was deleted meanwhile): the alert goes out without the link")
    func unknownActivity() async throws {
        let fake = try FakePushWardServer()
        // PushWard answers as it does for a slug it does not hold, to the first alert only.
        let answered = LineLog()
        fake.setFault { method, path, _ in
            guard method == "POST", path == "/notifications", answered.all.isEmpty else { return nil }
            answered.append(path)
            return .status(422, code: "notification.activity_not_found", detail: "no such activity")
        }
        let bridge = try Bridge(fake: fake, topLevel: Self.alertsOn)
        for event in Self.script(6, ago: 900).deliveries(waves: Self.failing) { try await bridge.deliver(event) }
        #expect(await DispatchEndToEndTests.eventually { fake.acceptedNotifications.count == 1 })
        await bridge.daemon.shutdown()
        let refused = try #require(fake.requests.first { $0.path == "/notifications" })
        #expect(refused.status == 422)
        #expect(refused.body?["activity_slug"] == .string(DispatchEndToEndTests.slug), "linked while the card lived")
        let sent = try #require(fake.acceptedNotifications.first?.body)
        #expect(sent["activity_slug"] == nil)
        #expect(try Self.alerts(bridge, runID: 6).first?.state == .sent)
        #expect(try Self.alerts(bridge, runID: 6).first?.activitySlug == nil)
    }

    /// The real binary on a configuration with alerts on, delivering to `fake`.
    static func serve(directory: String, fake: FakePushWardServer) throws -> CrashRecoveryTests.ServeProcess {
        let path = directory + "/config.json"
        let json = """
            {"listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "\(directory)/bridge.sqlite",
             "alerts": {},
             "github": {"webhook_secrets": ["\(CrashRecoveryTests.secret)"]},
             "pushward": {"url": "\(fake.baseURL)", "api_key": "\(fake.apiKey)", "end_delay": "0s",
                          "end_display_time": "0s", "min_update_interval": "0s",
                          "fidelity": "full", "coalesce": "0s", "max_updates_per_hour": 3600}}
            """
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return try CrashRecoveryTests.ServeProcess(configPath: path)
    }

    static func delivered(_ events: [WebhookEvent], to bridge: CrashRecoveryTests.ServeProcess, prefix: String) {
        for (index, event) in events.enumerated() {
            #expect(CrashRecoveryTests.post(event, id: "\(prefix)-\(index)", port: bridge.port) == 202)
        }
    }

    static func alertRow(_ directory: String) -> AlertRecord? {
        let database = try? BridgeDatabase(path: directory + "/bridge.sqlite", readOnly: true)
        return (try? database?.alerts(repository: "acme/widgets", runID: 7))??.first
    }

    @Test("SIGKILL with the alert recorded and not sent: the next start sends it, once")
    func killedBeforeSending() async throws {
        let fake = try FakePushWardServer()
        let port = fake.port
        fake.stop()
        let directory = NSTemporaryDirectory() + "alert-kill-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var bridge = try Self.serve(directory: directory, fake: fake)
        Self.delivered(Self.script(7, ago: 900).deliveries(waves: Self.failing), to: bridge, prefix: "kill")
        // Recorded with the delivery; nothing can go out to a PushWard that is down.
        #expect(await DispatchEndToEndTests.eventually { Self.alertRow(directory) != nil })
        bridge.kill()
        #expect(Self.alertRow(directory)?.state == .pending)
        try fake.start(port: port)
        bridge = try Self.serve(directory: directory, fake: fake)
        #expect(await DispatchEndToEndTests.eventually(timeout: 30) { fake.acceptedNotifications.count == 1 })
        #expect(await DispatchEndToEndTests.eventually { Self.alertRow(directory)?.state == .sent })
        try await Task.sleep(for: .seconds(1))
        _ = bridge.terminate()
        #expect(fake.acceptedNotifications.count == 1)
        #expect(fake.acceptedNotifications.first?.body["activity_slug"] != nil, "linked once the card exists")
        #expect(fake.violations.isEmpty, "\(fake.violations)")
    }

    @Test("SIGKILL while PushWard holds the POST: sent again on start, with the same collapse id, so one shows")
    func killedWhileSending() async throws {
        let fake = try FakePushWardServer()
        let arrived = LineLog()
        fake.setFault { method, path, _ in
            guard method == "POST" && path == "/notifications" else { return nil }
            arrived.append(path)
            return .delay(2)
        }
        let directory = NSTemporaryDirectory() + "alert-kill-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var bridge = try Self.serve(directory: directory, fake: fake)
        Self.delivered(Self.script(7, ago: 900).deliveries(waves: Self.failing), to: bridge, prefix: "held")
        // The POST reached PushWard, which holds it: the bridge dies before any answer.
        #expect(await DispatchEndToEndTests.eventually { !arrived.all.isEmpty })
        bridge.kill()
        // PushWard finishes the POST it was holding: the notification exists, the bridge never heard.
        #expect(await DispatchEndToEndTests.eventually { fake.acceptedNotifications.count == 1 })
        fake.setFault(nil)
        bridge = try Self.serve(directory: directory, fake: fake)
        #expect(await DispatchEndToEndTests.eventually(timeout: 30) { Self.alertRow(directory)?.state == .sent })
        _ = bridge.terminate()
        let notifications = fake.acceptedNotifications
        #expect(notifications.count == 2)
        #expect(Set(notifications.map { $0.body["collapse_id"] }).count == 1, "the phone replaces the first copy")
        #expect(Self.alertRow(directory)?.attempts == 2)
    }
}
