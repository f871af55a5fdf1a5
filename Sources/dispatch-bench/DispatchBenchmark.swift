import BridgeCore
import BridgeDaemon
import BridgeTestSupport
import Foundation
import WebhookServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Measures the dispatcher against the in-repo fake PushWard on loopback:
/// - push economy: requests the daemon sends for a reference run replayed in a burst, against the
///   run's visible state changes (what `render` sends with no throttle) — target ≤ changes + 3 —
///   and the shortest gap between two non-end PATCHes of a card — target ≥ `min_update_interval`;
/// - latency: from posting a delivery to PushWard receiving the request it causes, with the
///   throttle off and deliveries 100 ms apart — target median under 10 ms.
enum DispatchBenchmark {
    static let defaultFiles = [
        "examples/sample-run.jsonl", "examples/reference/matrix-success.jsonl",
        "examples/reference/matrix-failure.jsonl",
    ]
    static let secret = "bench-secret-0123456"
    static let repetitions = 3

    struct RunFigures {
        var name: String
        var deliveries: Int
        var visibleChanges: Int
        var requests: [Int]
        var shortestGap: [Double]
    }

    static func run(files: [String]) async -> Int32 {
        var figures: [RunFigures] = []
        var latencies: [Double] = []
        for file in files {
            guard let contents = FileManager.default.contents(atPath: file),
                let deliveries = try? RecordedDelivery.parse(fileName: file, contents: contents)
            else {
                FileHandle.standardError.write(Data("dispatch-bench: cannot read \(file)\n".utf8))
                return 1
            }
            var run = RunFigures(
                name: (file as NSString).lastPathComponent, deliveries: deliveries.count,
                visibleChanges: visibleChanges(deliveries), requests: [], shortestGap: [])
            for _ in 0..<repetitions {
                do {
                    let burst = try await replay(deliveries, minUpdateInterval: "1s", spacing: 0)
                    run.requests.append(burst.requests.count)
                    run.shortestGap.append(shortestPatchGap(burst.requests))
                    let paced = try await replay(deliveries, minUpdateInterval: "0s", spacing: 0.1)
                    latencies += paced.latencies
                } catch {
                    FileHandle.standardError.write(Data("dispatch-bench: \(error)\n".utf8))
                    return 1
                }
            }
            figures.append(run)
        }
        report(figures, latencies: latencies)
        return 0
    }

    /// The PATCHes `render` makes with no throttle: one per visible change of the card.
    static func visibleChanges(_ deliveries: [RecordedDelivery]) -> Int {
        var settings = ActivitySettings()
        settings.minUpdateInterval = 0
        var session = RenderSession(engine: BridgeEngine(settings: settings))
        var outputs: [RenderSession.Output] = []
        for delivery in deliveries {
            guard let event = try? WebhookDecoder.decode(event: delivery.event, body: delivery.body, contentType: nil)
            else { continue }
            outputs += session.feed(event)
        }
        outputs += session.finish()
        return outputs.filter { $0.planned.request.method == .patch }.count
    }

    struct Replay {
        var requests: [FakePushWardServer.Received]
        var latencies: [Double]
    }

    static func replay(_ deliveries: [RecordedDelivery], minUpdateInterval: String, spacing: Double) async throws
        -> Replay
    {
        let fake = try FakePushWardServer()
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let daemon = try startDaemon(
            fake: fake, directory: directory, pushward: #", "min_update_interval": "\#(minUpdateInterval)""#)
        var sentAt: [Double] = []
        for (index, delivery) in deliveries.enumerated() {
            if spacing > 0, index > 0 { try await Task.sleep(for: .milliseconds(Int(spacing * 1000))) }
            sentAt.append(Date().timeIntervalSince1970)
            try await post(delivery, id: "bench-\(index)-\(UUID().uuidString)", port: daemon.port)
        }
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, !fake.requests.contains(where: { $0.body?["state"] == "ended" }) {
            try await Task.sleep(for: .milliseconds(20))
        }
        await daemon.shutdown()
        let requests = fake.requests
        // Each request answers the latest delivery posted before it; end frames wait on timers, not
        // on a delivery, and are left out.
        let latencies = requests.compactMap { request -> Double? in
            guard request.body?["state"] != "ended", request.body?["content"]?["progress"] != 1 else { return nil }
            guard let cause = sentAt.last(where: { $0 <= request.at }) else { return nil }
            return (request.at - cause) * 1000
        }
        return Replay(requests: requests, latencies: latencies)
    }

    /// A temporary directory for one daemon's database.
    static func scratchDirectory() throws -> String {
        let directory = NSTemporaryDirectory() + "dispatch-bench-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The daemon on loopback, sending to `fake`, its database in `directory`: end frames and
    /// ends after 1 s, plus the `pushward` keys in `pushward` (a fragment starting with a comma).
    static func startDaemon(fake: FakePushWardServer, directory: String, pushward: String = "") throws -> Daemon {
        let json = """
            {"listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "\(directory)/bridge.sqlite",
             "github": {"webhook_secrets": ["\(secret)"]},
             "pushward": {"url": "\(fake.baseURL)", "api_key": "\(fake.apiKey)", "end_delay": "1s",
                          "end_display_time": "1s"\(pushward)}}
            """
        let configuration = try BridgeConfiguration(json: Data(json.utf8))
        return try Daemon.start(configuration: configuration, logger: Logger(label: "bench", minimumLevel: .error))
    }

    static func post(_ delivery: RecordedDelivery, id: String, port: Int) async throws {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/webhook")!)
        request.httpMethod = "POST"
        request.httpBody = delivery.body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(delivery.event, forHTTPHeaderField: "X-GitHub-Event")
        request.setValue(id, forHTTPHeaderField: "X-GitHub-Delivery")
        request.setValue(
            WebhookSignature.sign(body: delivery.body, secret: secret), forHTTPHeaderField: "X-Hub-Signature-256")
        _ = try await URLSession.shared.data(for: request)
    }

    /// The shortest time between two PATCHes of the card that are not end frames.
    static func shortestPatchGap(_ requests: [FakePushWardServer.Received]) -> Double {
        let patches = requests.filter {
            $0.method == "PATCH" && $0.body?["state"] != "ended" && $0.body?["content"]?["progress"] != 1
        }
        return zip(patches, patches.dropFirst()).map { $1.at - $0.at }.min() ?? .infinity
    }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
    }

    static func report(_ figures: [RunFigures], latencies: [Double]) {
        print("dispatch benchmark: reference runs replayed through the daemon to the fake PushWard (loopback)")
        print(
            "run                     deliveries  visible changes  requests (median of \(repetitions))  target ≤  shortest PATCH gap"
        )
        var summary: [JSONValue] = []
        for run in figures {
            let requests = Int(percentile(run.requests.map(Double.init), 0.5))
            let gap = run.shortestGap.min() ?? .infinity
            print(
                run.name.padding(toLength: 24, withPad: " ", startingAt: 0)
                    + String(run.deliveries).padding(toLength: 12, withPad: " ", startingAt: 0)
                    + String(run.visibleChanges).padding(toLength: 17, withPad: " ", startingAt: 0)
                    + String(requests).padding(toLength: 26, withPad: " ", startingAt: 0)
                    + String(run.visibleChanges + 3).padding(toLength: 10, withPad: " ", startingAt: 0)
                    + (gap.isFinite ? String(format: "%.2f s", gap) : "-"))
            summary.append([
                "run": .string(run.name), "deliveries": .number(Double(run.deliveries)),
                "visible_changes": .number(Double(run.visibleChanges)),
                "requests": .array(run.requests.map { .number(Double($0)) }),
                "shortest_patch_gap_s": gap.isFinite ? .number(gap) : .null,
            ])
        }
        let median = percentile(latencies, 0.5)
        let p99 = percentile(latencies, 0.99)
        print(
            String(
                format:
                    "webhook → PushWard latency, throttle off: median %.2f ms, p90 %.2f ms, p99 %.2f ms (%d requests)",
                median, percentile(latencies, 0.9), p99, latencies.count))
        let document: JSONValue = [
            "runs": .array(summary), "latency_ms": ["median": .number(median), "p99": .number(p99)],
            "samples": .number(Double(latencies.count)),
        ]
        try? FileManager.default.createDirectory(atPath: ".build/bench", withIntermediateDirectories: true)
        try? document.canonicalString.write(toFile: ".build/bench/dispatch.json", atomically: true, encoding: .utf8)
    }
}
