import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing
import WebhookServer

/// The webhook listener against what an unauthenticated sender controls (headers of forged
/// deliveries: their size, their rate, their names) and against signed but impossible values.
@Suite("webhook ingress hardening", .timeLimit(.minutes(1)))
struct IngressHardeningTests {
    static let script = RunScript(runID: 4_343, workflow: "CI")

    static func queuedJob(id: Int = 60_000, attempt: Int = 1) -> Data {
        var job = GitHubPayload.json(script.job(id, "lint", "queued", createdAt: 2))
        if case .object(var root) = job, case .object(var inner)? = root["workflow_job"] {
            inner["run_attempt"] = .number(Double(attempt))
            root["workflow_job"] = .object(inner)
            job = .object(root)
        }
        return job.canonicalData
    }

    /// Forged deliveries with a 9 KB delivery id, event name and signature (together under the
    /// 32 KiB header limit).
    static func forged(_ daemon: RunningDaemon, count: Int) async throws {
        let huge = String(repeating: "A", count: 9_000)
        for index in 0..<count {
            let response = try await daemon.request(
                method: "POST", target: "/webhook",
                headers: [
                    ("Content-Type", "application/json"), ("X-GitHub-Event", "evt-\(index)-" + huge),
                    ("X-GitHub-Delivery", "forged-\(index)-" + huge), ("X-Hub-Signature-256", "sha256=" + huge),
                ], body: Self.queuedJob())
            #expect(response.status == 401)
        }
    }

    @Test("unsigned headers are logged cut to 64 characters; the 401 line comes once a second with a dropped count")
    func unauthenticatedLogging() async throws {
        try await withDaemon { daemon in
            try await Self.forged(daemon, count: 25)
            // Past the period, the next refusal is logged with what was folded meanwhile.
            try await Task.sleep(for: .milliseconds(1_100))
            try await Self.forged(daemon, count: 1)

            let lines = daemon.log.entries(containing: "signature does not verify")
            #expect(!lines.isEmpty)
            // At most one line a second, however fast (or slow, under a sanitizer) the burst went.
            let times = lines.compactMap { $0["ts"]?.stringValue.flatMap(GitHubTimestamp.parse) }
            #expect(times.count == lines.count)
            for (earlier, later) in zip(times, times.dropFirst()) {
                #expect(later - earlier >= 0.999, "two lines \(later - earlier) s apart")
            }
            #expect(lines.count < 26, "every refusal was logged")
            let accounted = lines.reduce(0) { $0 + 1 + Int($1["log.dropped"]?.doubleValue ?? 0) }
            #expect(accounted == 26, "every refusal is either logged or counted in log.dropped")
            for line in lines {
                let delivery = try #require(line["github.delivery"]?.stringValue)
                let event = try #require(line["github.event"]?.stringValue)
                #expect(delivery.unicodeScalars.count <= 65 && delivery.hasSuffix("…"))
                #expect(event.unicodeScalars.count <= 65 && event.hasSuffix("…"))
            }
            #expect(daemon.log.lines.allSatisfy { $0.utf8.count < 2_000 }, "a log line carries a huge header")
            #expect(daemon.daemon.counters.value("signature_failures_total") == 26)
        }
    }

    @Test(
        "every refusal an unauthenticated or malformed request causes (415, 400, 401, 404) is one line a second per kind, the rest counted"
    )
    func everyRefusalIsRateLimited() async throws {
        try await withDaemon { daemon in
            let body = Self.queuedJob()
            let signature = WebhookSignature.sign(body: body, secret: daemon.configuration.webhookSecrets[0])
            // Hostile header text: the refusal lines carry it cut short, never whole.
            let hostile = "\u{202E}\u{0}evil\u{1F600}" + String(repeating: "x", count: 2_000)
            let kinds: [(message: String, status: Int, headers: [(String, String)], target: String)] = [
                (
                    "unsupported content type", 415,
                    [("Content-Type", "text/plain"), ("X-GitHub-Event", hostile), ("X-GitHub-Delivery", "a")],
                    "/webhook"
                ),
                (
                    "signature does not verify", 401,
                    [("Content-Type", "application/json"), ("X-GitHub-Event", "workflow_job")], "/webhook"
                ),
                (
                    "without X-GitHub-Event", 400,
                    [("Content-Type", "application/json"), ("X-Hub-Signature-256", signature)], "/webhook"
                ),
                (
                    "X-GitHub-Delivery is not an id", 400,
                    [
                        ("Content-Type", "application/json"), ("X-Hub-Signature-256", signature),
                        ("X-GitHub-Event", "workflow_job"), ("X-GitHub-Delivery", hostile),
                    ], "/webhook"
                ),
                ("path this listener does not serve", 404, [], "/wp-login.php?%E2%80%AE=%zz&%00"),
            ]
            let perKind = 150
            let started = Date()
            // The kinds side by side, each kind's requests in turn: a fifth of the wall time, which
            // a sanitizer stretches manyfold (750 in a row outlasted the time limit under TSan).
            try await withThrowingTaskGroup(of: Void.self) { group in
                for kind in kinds {
                    group.addTask {
                        for index in 0..<perKind {
                            let response = try await daemon.request(
                                method: kind.status == 404 ? "GET" : "POST", target: kind.target,
                                headers: kind.headers, body: kind.status == 404 ? Data() : body)
                            #expect(response.status == kind.status, "\(kind.message) #\(index)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            let seconds = Date().timeIntervalSince(started)
            var written = 0
            for kind in kinds {
                let lines = daemon.log.entries(containing: kind.message)
                written += lines.count
                #expect(!lines.isEmpty, "no line at all for \(kind.message)")
                // One line a second at most, the first at once.
                #expect(lines.count <= Int(seconds) + 1, "\(lines.count) lines of \(kind.message) in \(seconds) s")
                let folded = lines.reduce(0) { $0 + Int($1["log.dropped"]?.doubleValue ?? 0) }
                // The folds said so far, plus those still waiting for the next line, are all the rest.
                #expect(folded <= perKind - lines.count, "\(kind.message)")
            }
            // Bounded by the time the refusals took, not by a share of them that holds only on a
            // fast machine: one line a second per kind, the first at once.
            #expect(
                written <= kinds.count * (Int(seconds) + 1), "\(written) lines for \(kinds.count * perKind) refusals")
            #expect(
                daemon.daemon.counters.value("log_lines_suppressed_total") == kinds.count * perKind - written,
                "every line not written is counted")
            let metrics = daemon.daemon.counters.prometheusText(gauges: [])
            #expect(metrics.contains("log_lines_suppressed_total{line=\"unsupported_media_type\"}"))
            #expect(daemon.log.lines.allSatisfy { $0.utf8.count < 2_000 }, "a log line carries a whole header")
            // Still answering.
            #expect(try await daemon.request(method: "GET", target: "/healthz").status == 200)
        }
    }

    @Test("the event label of deliveries_total is one of workflow_run, workflow_job, ping, other")
    func eventLabelsAreAFixedSet() async throws {
        try await withDaemon { daemon in
            for name in ["check_run", "made-up-event-\(UUID().uuidString)", "x\"} 1\u{2028}# HELP injected"] {
                let response = try await daemon.deliver(event: name, id: deliveryID("ev"), body: Data("{}".utf8))
                #expect(response.status == 200, "\(name)")
            }
            #expect(
                try await daemon.deliver(event: "workflow_job", id: deliveryID("ok"), body: Self.queuedJob()).status
                    == 202)
            let text = daemon.daemon.counters.prometheusText(gauges: [])
            let labels = Set(
                text.split(separator: "\n").filter { $0.hasPrefix("pushward_bridge_deliveries_total{") }
                    .compactMap { line -> String? in
                        guard let start = line.range(of: "event=\""),
                            let end = line[start.upperBound...].firstIndex(of: "\"")
                        else { return nil }
                        return String(line[start.upperBound..<end])
                    })
            #expect(labels == ["other", "workflow_job"], "\(labels)")
            #expect(!text.contains("made-up-event"))
            #expect(!text.contains("injected"))
        }
    }

    @Test(
        "a signed delivery whose X-GitHub-Delivery is over 64 characters or outside [A-Za-z0-9._-] is 400, nothing stored",
        arguments: [
            String(repeating: "a", count: 65), "has space", "slash/../etc", "évènement", "id\u{202E}gnp", "<script>",
            "semi;colon", "tab\there", "quote\"",
        ])
    func deliveryIDsAreChecked(id: String) async throws {
        try await withDaemon { daemon in
            let response = try await daemon.deliver(event: "workflow_job", id: id, body: Self.queuedJob())
            #expect(response.status == 400)
            #expect(response.json?["error"] == "invalid_header")
            #expect(try await daemon.read { try $0.listDeliveries(limit: 10).count } == 0)
            // The longest and the plainest ids that are allowed.
            let longest = String(repeating: "Z", count: 64)
            #expect(try await daemon.deliver(event: "workflow_job", id: longest, body: Self.queuedJob()).status == 202)
            #expect(
                try await daemon.deliver(
                    event: "workflow_job", id: "72d3162e-cc78.11e3_81ab", body: Self.queuedJob(id: 2)
                )
                .status == 202)
        }
    }

    @Test("run_attempt 0 or a negative job id is 400 naming the field, recorded as rejected, nothing applied")
    func impossibleValues() async throws {
        try await withDaemon { daemon in
            let zero = try await daemon.deliver(
                event: "workflow_job", id: "attempt-zero", body: Self.queuedJob(attempt: 0))
            #expect(zero.status == 400)
            #expect(zero.json?["detail"]?.stringValue?.contains("'workflow_job.run_attempt'") == true)
            let negative = try await daemon.deliver(
                event: "workflow_job", id: "negative-id", body: Self.queuedJob(id: -60_000))
            #expect(negative.status == 400)
            #expect(negative.json?["detail"]?.stringValue?.contains("'workflow_job.id'") == true)
            let stored = try await daemon.read {
                (try $0.delivery(id: "attempt-zero"), try $0.delivery(id: "negative-id"))
            }
            #expect(stored.0?.outcome == .rejected)
            #expect(stored.1?.outcome == .rejected)
            #expect(try await daemon.read { try $0.listRuns().count } == 0)
        }
    }
}
