import BridgeCore
import BridgeDaemon
import BridgeTestSupport
import Foundation
import Testing
import WebhookServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Metrics and the admin listener", .serialized)
struct MetricsTests {
    static let secret = "metrics-secret-01234"

    static func daemon(adminToken: String? = nil) throws -> (Daemon, String) {
        let directory = NSTemporaryDirectory() + "metrics-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var json = """
            {"listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "\(directory)/bridge.sqlite",
             "github": {"webhook_secrets": ["\(secret)"]},
             "pushward": {"end_delay": "0s", "end_display_time": "0s", "min_update_interval": "0s",
                          "fidelity": "full", "coalesce": "0s", "max_updates_per_hour": 3600}
            """
        if let adminToken { json += #", "admin_token": "\#(adminToken)""# }
        json += "}"
        let configuration = try BridgeConfiguration(json: Data(json.utf8))
        return (
            try Daemon.start(
                configuration: configuration, logger: Logger(label: "test", minimumLevel: .error, sink: { _ in })),
            directory
        )
    }

    @Test("label values are escaped for the exposition format; several labels come out sorted")
    func labelEscaping() {
        let metrics = Metrics()
        metrics.add("deliveries_total", labels: ["outcome": "plain"])
        metrics.add("deliveries_total", labels: ["outcome": "quote\" back\\slash\nline"])
        metrics.add("deliveries_total", 2, labels: ["outcome": "plain", "event": "workflow_job"])
        metrics.observe("ingest_batch_size", 3, buckets: Metrics.batchBuckets)
        let text = metrics.prometheusText(gauges: [])
        #expect(text.contains(#"pushward_bridge_deliveries_total{outcome="plain"} 1"#))
        #expect(text.contains(#"pushward_bridge_deliveries_total{outcome="quote\" back\\slash\nline"} 1"#))
        #expect(text.contains(#"pushward_bridge_deliveries_total{event="workflow_job",outcome="plain"} 2"#))
        #expect(text.contains(#"pushward_bridge_ingest_batch_size_bucket{le="2"} 0"#))
        #expect(text.contains(#"pushward_bridge_ingest_batch_size_bucket{le="4"} 1"#))
        #expect(metrics.observations("ingest_batch_size").count == 1)
        #expect(metrics.observations("ingest_batch_size").sum == 3)
    }

    static func send(_ request: URLRequest) async throws -> (Int, String) {
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    static func delivery(_ event: WebhookEvent, port: Int, secret: String = MetricsTests.secret) -> URLRequest {
        SignedDelivery.request(event, port: port, secret: secret)
    }

    /// The value of one series in a Prometheus exposition, or nil.
    static func sample(_ text: String, _ series: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }
            .flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    @Test("after a replay, /metrics counts deliveries, signature failures, requests and latencies")
    func scrapeAfterReplay() async throws {
        let (daemon, directory) = try Self.daemon()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let events = RunScript(start: Date().timeIntervalSince1970 - 300).deliveries(waves: [
            [RunScript.Job("build", duration: 20)], [RunScript.Job("test", duration: 30)],
        ])
        for event in events { #expect(try await Self.send(Self.delivery(event, port: daemon.port)).0 == 202) }
        #expect(try await Self.send(Self.delivery(events[0], port: daemon.port, secret: "wrong")).0 == 401)
        // The dispatcher pushes after the deliveries are answered: scrape once it has sent the end,
        // however long that takes (a fixed pause here was a bet on the machine's speed). The minute
        // only guards against an end that never comes, which the expectations below then report.
        let scrape = URLRequest(url: URL(string: "http://127.0.0.1:\(daemon.adminPort)/metrics")!)
        let deadline = ContinuousClock.now + .seconds(60)
        var (status, text) = try await Self.send(scrape)
        // The counts of runs and cards follow within `Publishing.interval`.
        while Self.sample(text, #"pushward_bridge_pushward_requests_total{kind="end",status="200"}"#) == nil
            || Self.sample(text, "pushward_bridge_runs_in_progress") != 0,
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(50))
            (status, text) = try await Self.send(scrape)
        }
        await daemon.shutdown()
        #expect(status == 200)
        let jobs = events.filter { if case .workflowJob = $0 { true } else { false } }.count
        #expect(
            Self.sample(text, #"pushward_bridge_deliveries_total{event="workflow_job",outcome="accepted"}"#)
                == Double(jobs))
        #expect(
            Self.sample(text, #"pushward_bridge_deliveries_total{event="workflow_run",outcome="accepted"}"#)
                == Double(events.count - jobs))
        #expect(Self.sample(text, "pushward_bridge_signature_failures_total") == 1)
        #expect(Self.sample(text, #"pushward_bridge_http_responses_total{status="202"}"#) == Double(events.count))
        #expect(Self.sample(text, #"pushward_bridge_http_responses_total{status="401"}"#) == 1)
        #expect(Self.sample(text, "pushward_bridge_ack_latency_seconds_count") == Double(events.count + 1))
        #expect(Self.sample(text, #"pushward_bridge_pushward_requests_total{kind="create",status="201"}"#) == 1)
        #expect(Self.sample(text, #"pushward_bridge_pushward_requests_total{kind="end",status="200"}"#) == 1)
        #expect(Self.sample(text, "pushward_bridge_runs_in_progress") == 0)
        #expect(Self.sample(text, "pushward_bridge_circuit_breaker_open") == 0)
        #expect(Self.sample(text, "pushward_bridge_quota_exhausted") == 0)
        #expect((Self.sample(text, "pushward_bridge_database_bytes") ?? 0) > 0)
        // What memory holds: the run just finished (within its grace), its card, its workflow's history.
        #expect(Self.sample(text, "pushward_bridge_runs_held") == 1)
        #expect(Self.sample(text, "pushward_bridge_activities_held") == 1)
        #expect(Self.sample(text, "pushward_bridge_history_workflows_held") == 1)
        #expect((Self.sample(text, "pushward_bridge_sqlite_memory_bytes") ?? 0) > 0)
        #expect(text.contains("# TYPE pushward_bridge_ack_latency_seconds histogram"))
    }

    @Test("/metrics shows when the budget resets and how many runs the planner expects before then")
    func budgetForecast() async throws {
        let (daemon, directory) = try Self.daemon()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let url = URL(string: "http://127.0.0.1:\(daemon.adminPort)/metrics")!
        let unknown = try await Self.send(URLRequest(url: url)).1
        #expect(Self.sample(unknown, "pushward_bridge_budget_resets_in_seconds") == -1)
        #expect(Self.sample(unknown, "pushward_bridge_budget_forecast_runs") == -1)

        let now = Date().timeIntervalSince1970
        await daemon.service.updateBudget(
            PushWardUsage(liveActivityUpdatesUsed: 40, liveActivityUpdatesLimit: 250, quotaResetsAt: now + 86_400),
            at: now)
        let text = try await Self.send(URLRequest(url: url)).1
        await daemon.shutdown()
        let resetsIn = try #require(Self.sample(text, "pushward_bridge_budget_resets_in_seconds"))
        #expect(resetsIn > 86_300 && resetsIn <= 86_400, "\(resetsIn)")
        // No run seen yet: the planner's prior, 20 runs a day, over the day left.
        let forecast = try #require(Self.sample(text, "pushward_bridge_budget_forecast_runs"))
        #expect(forecast > 19.9 && forecast <= 20, "\(forecast)")
        #expect(text.contains("# HELP pushward_bridge_budget_forecast_runs"))
    }

    @Test("with an admin token, the admin listener requires it")
    func adminToken() async throws {
        let (daemon, directory) = try Self.daemon(adminToken: "s3cret-token")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let url = URL(string: "http://127.0.0.1:\(daemon.adminPort)/metrics")!
        let anonymous = try await Self.send(URLRequest(url: url))
        var wrong = URLRequest(url: url)
        wrong.setValue("Bearer nope", forHTTPHeaderField: "Authorization")
        let refused = try await Self.send(wrong)
        var right = URLRequest(url: url)
        right.setValue("Bearer s3cret-token", forHTTPHeaderField: "Authorization")
        let allowed = try await Self.send(right)
        await daemon.shutdown()
        #expect(anonymous.0 == 401)
        #expect(refused.0 == 401)
        #expect(allowed.0 == 200)
        #expect(allowed.1.contains("pushward_bridge_runs_in_progress"))
    }

    @Test("serve refuses an admin listener off loopback without a token")
    func tokenRequiredOffLoopback() throws {
        var configuration = BridgeConfiguration()
        configuration.webhookSecrets = ["metrics-secret-01234"]
        configuration.adminListen = "0.0.0.0:9090"
        #expect(ConfigurationLoader.servingProblems(configuration).map(\.key) == ["admin_token"])
        configuration.adminToken = "token"
        let short = ConfigurationLoader.servingProblems(configuration)
        #expect(short.map(\.key) == ["admin_token"], "a token off loopback is at least 32 characters")
        #expect(short.first?.description.contains("at least 32") == true, "\(short)")
        configuration.adminToken = String(repeating: "k", count: 31)
        #expect(ConfigurationLoader.servingProblems(configuration).map(\.key) == ["admin_token"])
        configuration.adminToken = String(repeating: "k", count: 32)
        #expect(ConfigurationLoader.servingProblems(configuration).isEmpty)
        configuration.adminListen = "127.0.0.1:9090"
        configuration.adminToken = "t"
        #expect(ConfigurationLoader.servingProblems(configuration).isEmpty, "on loopback any token will do")
    }
}
