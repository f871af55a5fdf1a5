import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing
import WebhookServer

/// `POST /webhook` and the other routes over real HTTP against an in-process daemon: every status
/// the listener answers, what it stores for each, and what it logs and counts.
@Suite("webhook ingress over HTTP", .timeLimit(.minutes(1)))
struct WebhookIngressTests {
    static let script = RunScript(runID: 4_242, workflow: "CI")

    /// A queued job of the script's run, as a JSON body.
    static func queuedJob(id: Int = 50_000, name: String = "lint") -> Data {
        GitHubPayload.body(script.job(id, name, "queued", createdAt: 2))
    }

    /// Every answer is a small JSON object with the JSON content type.
    private func expectSmallJSON(_ response: HTTPTestClient.Response, sourceLocation: SourceLocation = #_sourceLocation)
    {
        #expect(response.headers["content-type"] == "application/json", sourceLocation: sourceLocation)
        #expect(response.json != nil, "not a JSON object: \(response.text)", sourceLocation: sourceLocation)
        #expect(response.body.count < 1_024, "\(response.body.count) bytes", sourceLocation: sourceLocation)
    }

    private func deliveryCount(_ daemon: RunningDaemon) async throws -> Int {
        try await daemon.read { try $0.listDeliveries(limit: 1_000).count }
    }

    // MARK: Signatures

    @Test("a missing or wrong signature is 401: nothing stored, counted and logged with the delivery id")
    func signatureFailures() async throws {
        try await withDaemon { daemon in
            let body = Self.queuedJob()
            let unsigned = try await daemon.request(
                method: "POST", target: "/webhook",
                headers: [
                    ("Content-Type", "application/json"), ("X-GitHub-Event", "workflow_job"),
                    ("X-GitHub-Delivery", "unsigned-1"),
                ], body: body)
            #expect(unsigned.status == 401)
            #expect(unsigned.json?["error"] == "invalid_signature")
            expectSmallJSON(unsigned)

            let wrongSecret = try await daemon.deliver(
                event: "workflow_job", id: "wrong-secret-1", body: body, secret: "not the configured secret")
            #expect(wrongSecret.status == 401)
            expectSmallJSON(wrongSecret)

            // The legacy SHA-1 header format is never trusted, even with the right secret.
            let legacy = try await daemon.request(
                method: "POST", target: "/webhook",
                headers: [
                    ("Content-Type", "application/json"), ("X-GitHub-Event", "workflow_job"),
                    ("X-GitHub-Delivery", "legacy-1"), ("X-Hub-Signature-256", "sha1=0123456789abcdef"),
                ], body: body)
            #expect(legacy.status == 401)

            // Signed over other bytes: a valid signature of the original body does not cover a changed one.
            var tampered = try await daemon.request(
                method: "POST", target: "/webhook",
                headers: [
                    ("Content-Type", "application/json"), ("X-GitHub-Event", "workflow_job"),
                    ("X-GitHub-Delivery", "tampered-1"),
                    (
                        "X-Hub-Signature-256",
                        WebhookSignature.sign(body: body, secret: daemon.configuration.webhookSecrets[0])
                    ),
                ], body: body + Data(" ".utf8))
            #expect(tampered.status == 401)

            // The signature is checked before the body is parsed: garbage with a bad signature is 401, not 400.
            tampered = try await daemon.deliver(
                event: "workflow_job", id: "garbage-1", body: Data("not json".utf8), secret: "wrong")
            #expect(tampered.status == 401)

            #expect(daemon.daemon.counters.value("signature_failures_total") == 5)
            #expect(try await deliveryCount(daemon) == 0)
            let logged = daemon.log.entries(containing: "signature")
            let ids = Set(logged.compactMap { $0["github.delivery"]?.stringValue })
            // The line is rate-limited (IngressHardeningTests): the first is always written, the
            // rest within a second are folded into the next one's `log.dropped`.
            #expect(ids.contains("unsigned-1"))
            #expect(ids.isSubset(of: ["unsigned-1", "wrong-secret-1", "legacy-1", "tampered-1", "garbage-1"]))
            #expect(logged.reduce(0) { $0 + 1 + Int($1["log.dropped"]?.doubleValue ?? 0) } <= 5)
            #expect(logged.allSatisfy { $0["level"] == "warning" })
            // The body is never logged.
            #expect(!daemon.log.lines.contains { $0.contains("not json") })
        }
    }

    @Test("every configured secret verifies, for rotation")
    func secretRotation() async throws {
        try await withDaemon(configure: { $0.secrets = ["old-secret-0123456789", "new-secret-9876543210"] }) {
            daemon in
            let old = try await daemon.deliver(
                event: "workflow_job", id: "rotation-old", body: Self.queuedJob(id: 1), secret: "old-secret-0123456789")
            let new = try await daemon.deliver(
                event: "workflow_job", id: "rotation-new", body: Self.queuedJob(id: 2), secret: "new-secret-9876543210")
            #expect(old.status == 202)
            #expect(new.status == 202)
            #expect(daemon.daemon.counters.value("signature_failures_total") == 0)
            #expect(try await deliveryCount(daemon) == 2)
        }
    }

    // MARK: Accepted, duplicate, ignored

    @Test("202 applies a delivery; the same X-GitHub-Delivery again is 200 duplicate, counted, not applied")
    func acceptedThenDuplicate() async throws {
        try await withDaemon { daemon in
            let id = deliveryID()
            let first = try await daemon.deliver(event: "workflow_job", id: id, body: Self.queuedJob())
            #expect(first.status == 202)
            #expect(first.json?["status"] == "accepted")
            #expect(first.json?["delivery"] == .string(id))
            #expect(first.json?["run_id"] == 4_242)
            expectSmallJSON(first)

            // A redelivery carrying different content must not be applied a second time.
            let completed = GitHubPayload.body(
                Self.script.job(
                    50_000, "lint", "completed", createdAt: 2, startedAt: 3, completedAt: 9, conclusion: "success"))
            let again = try await daemon.deliver(event: "workflow_job", id: id, body: completed)
            #expect(again.status == 200)
            #expect(again.json?["status"] == "duplicate")
            expectSmallJSON(again)
            let third = try await daemon.deliver(event: "workflow_job", id: id, body: completed)
            #expect(third.json?["status"] == "duplicate")

            let (record, jobStatus) = try await daemon.read { database in
                (
                    try database.delivery(id: id),
                    try database.runAttempts(runID: 4_242).first?.state.jobs[50_000]?.status
                )
            }
            #expect(record?.outcome == .applied)
            #expect(record?.duplicates == 2)
            #expect(record?.event == "workflow_job")
            #expect(record?.action == "queued")
            #expect(jobStatus == .queued)
            #expect(try await deliveryCount(daemon) == 1)
        }
    }

    @Test(
        "a signed body seen before under another X-GitHub-Delivery is 200 duplicate, counted on the first, not applied")
    func replayedBodyIsDuplicate() async throws {
        try await withDaemon { daemon in
            let first = deliveryID("first")
            let body = Self.queuedJob()
            #expect(try await daemon.deliver(event: "workflow_job", id: first, body: body).status == 202)
            let replay = deliveryID("replay")
            let again = try await daemon.deliver(event: "workflow_job", id: replay, body: body)
            #expect(again.status == 200)
            #expect(again.json?["status"] == "duplicate")
            #expect(again.json?["delivery"] == .string(replay))
            #expect(again.json?["same_body_as"] == .string(first))
            let (original, replayed) = try await daemon.read { database in
                (try database.delivery(id: first), try database.delivery(id: replay))
            }
            #expect(original?.duplicates == 1)
            #expect(replayed == nil, "a replay is counted, not stored and applied again")
            #expect(try await deliveryCount(daemon) == 1)
            // The same signature with its hex in capitals verifies as well: still the same body.
            let signature = WebhookSignature.sign(body: body, secret: daemon.configuration.webhookSecrets[0])
            let shouted = try await daemon.request(
                method: "POST", target: "/webhook",
                headers: [
                    ("Content-Type", "application/json"), ("X-GitHub-Event", "workflow_job"),
                    ("X-GitHub-Delivery", deliveryID("shouted")),
                    ("X-Hub-Signature-256", "sha256=" + signature.dropFirst("sha256=".count).uppercased()),
                ], body: body)
            #expect(shouted.status == 200)
            #expect(shouted.json?["same_body_as"] == .string(first))
            #expect(try await deliveryCount(daemon) == 1)
            // A different body under yet another id is applied as usual.
            let completed = GitHubPayload.body(
                Self.script.job(
                    50_000, "lint", "completed", createdAt: 2, startedAt: 3, completedAt: 9, conclusion: "success"))
            #expect(
                try await daemon.deliver(event: "workflow_job", id: deliveryID("next"), body: completed).status == 202)
        }
    }

    @Test(
        "a Gitea or Forgejo delivery is 400 unsupported_forge before any secret is tried: nothing stored, said once"
    )
    func anotherForgeIsRefused() async throws {
        try await withDaemon { daemon in
            let secret = daemon.configuration.webhookSecrets[0]
            // As Gitea 1.26 sends it: its own headers beside GitHub's, signed with the same secret
            // as GitHub's hook (a shared secret would verify).
            let gitea = try DaemonFixtures.data("gitea/gitea-1.26.workflow_job.queued.json")
            let signature = WebhookSignature.sign(body: gitea, secret: secret)
            let giteaAnswer = try await daemon.request(
                method: "POST", target: "/webhook",
                headers: [
                    ("Content-Type", "application/json"), ("X-GitHub-Event", "workflow_job"),
                    ("X-Gitea-Event", "workflow_job"), ("X-GitHub-Delivery", "gitea-1"),
                    ("X-Gitea-Delivery", "gitea-1"), ("X-Hub-Signature-256", signature),
                    ("X-Gitea-Signature", String(signature.dropFirst("sha256=".count))),
                ], body: gitea)
            #expect(giteaAnswer.status == 400)
            #expect(giteaAnswer.json?["error"] == "unsupported_forge")
            #expect(giteaAnswer.json?["forge"] == "gitea")
            let forgejo = try DaemonFixtures.data("gitea/forgejo-12.action_run_failure.json")
            let forgejoAnswer = try await daemon.request(
                method: "POST", target: "/webhook",
                headers: [
                    ("Content-Type", "application/json"), ("X-GitHub-Event", "action_run_failure"),
                    ("X-Gitea-Event", "action_run_failure"), ("X-Forgejo-Event", "action_run_failure"),
                    ("X-GitHub-Delivery", "forgejo-1"),
                    ("X-Hub-Signature-256", WebhookSignature.sign(body: forgejo, secret: secret)),
                ], body: forgejo)
            #expect(forgejoAnswer.status == 400)
            #expect(forgejoAnswer.json?["forge"] == "forgejo")
            #expect(try await deliveryCount(daemon) == 0, "neither is stored nor applied")
            #expect(daemon.log.lines.contains { $0.contains("refused a delivery from another forge") })
            // GitHub's own delivery, with the same secret, goes on as before.
            #expect(
                try await daemon.deliver(event: "workflow_job", id: deliveryID("github"), body: Self.queuedJob()).status
                    == 202)
        }
    }

    @Test("an unsupported event is 200 ignored, recorded with the reason")
    func unsupportedEvent() async throws {
        try await withDaemon { daemon in
            let body = try DaemonFixtures.data("check_run.completed.json")
            let response = try await daemon.deliver(event: "check_run", id: "check-run-1", body: body)
            #expect(response.status == 200)
            #expect(response.json?["status"] == "ignored")
            let reason = try #require(response.json?["reason"]?.stringValue)
            #expect(reason.contains("check_run"))
            expectSmallJSON(response)
            let record = try await daemon.read { try $0.delivery(id: "check-run-1") }
            #expect(record?.outcome == .ignored)
            #expect(record?.reason == reason)
            #expect(record?.payloadBytes == body.count)
            // An event the bridge does not use: its headers and the reason, not its payload.
            #expect(record?.payload == nil)
        }
    }

    @Test("X-GitHub-Hook-ID is kept only as GitHub sends it, 1 to 20 digits; anything else is dropped")
    func hookIDChecked() async throws {
        try await withDaemon { daemon in
            let body = try DaemonFixtures.data("check_run.completed.json")
            let cases: [(String, String?)] = [
                ("123456789", "123456789"), ("12345678901234567890", "12345678901234567890"),
                ("123456789012345678901", nil), ("12a", nil), ("\u{1B}[2J" + String(repeating: "x", count: 5_000), nil),
                ("", nil), ("-1", nil),
            ]
            for (index, (header, kept)) in cases.enumerated() {
                let id = "hook-id-\(index)"
                // Each body its own (trailing spaces): the same body twice would be a duplicate.
                let response = try await daemon.deliver(
                    event: "check_run", id: id, body: body + Data(String(repeating: " ", count: index).utf8),
                    extraHeaders: [("X-GitHub-Hook-ID", header)])
                #expect(response.status == 200, "\(header.prefix(20))")
                let record = try await daemon.read { try $0.delivery(id: id) }
                #expect(record?.hookID == kept, "\(header.prefix(20))")
            }
            #expect(WebhookIngress.hookID(nil) == nil)
        }
    }

    @Test("a delivery the config filters out is 200 ignored, and the body says why")
    func filteredOut() async throws {
        try await withDaemon(configure: { $0.filters = #"{"branches": {"exclude": ["dependabot/*"]}}"# }) { daemon in
            let script = RunScript(runID: 77, branch: "dependabot/npm/left-pad")
            let response = try await daemon.deliver(
                event: "workflow_run", id: "filtered-1", body: GitHubPayload.body(script.run("requested", at: 0)))
            #expect(response.status == 200)
            #expect(response.json?["status"] == "ignored")
            let reason = try #require(response.json?["reason"]?.stringValue)
            #expect(reason.contains("branch dependabot/npm/left-pad"))
            #expect(reason.contains("dependabot/*"))
            expectSmallJSON(response)

            // The same run on another branch passes.
            let main = RunScript(runID: 78, branch: "main")
            let passed = try await daemon.deliver(
                event: "workflow_run", id: "filtered-2", body: GitHubPayload.body(main.run("requested", at: 0)))
            #expect(passed.status == 202)

            let (record, runs) = try await daemon.read { database in
                (try database.delivery(id: "filtered-1"), try database.listRuns().map(\.key.runID))
            }
            #expect(record?.outcome == .ignored)
            #expect(record?.reason == reason)
            #expect(runs == [78])
        }
    }

    @Test("ping is 200; a hook without workflow_run and workflow_job gets a warning in the body and the log")
    func ping() async throws {
        try await withDaemon { daemon in
            let lacking = PingEvent(
                zen: "Keep it logically awesome.", hookID: 11, events: ["push", "workflow_run"], contentType: "json",
                repository: nil)
            let warned = try await daemon.deliver(
                event: "ping", id: "ping-1", body: GitHubPayload.body(.ping(lacking)))
            #expect(warned.status == 200)
            #expect(warned.json?["status"] == "pong")
            let warning = try #require(warned.json?["warning"]?.stringValue)
            #expect(warning.contains("workflow_job"))
            #expect(!warning.contains("workflow_run and"))
            expectSmallJSON(warned)
            let logged = daemon.log.entries.filter { $0["github.delivery"] == "ping-1" && $0["level"] == "warning" }
            #expect(logged.count == 1)
            #expect(logged.first?["warning"] == .string(warning))

            let complete = PingEvent(
                zen: "Design for failure.", hookID: 12, events: ["workflow_job", "workflow_run"], contentType: "json",
                repository: nil)
            let fine = try await daemon.deliver(event: "ping", id: "ping-2", body: GitHubPayload.body(.ping(complete)))
            #expect(fine.status == 200)
            #expect(fine.json?["status"] == "pong")
            #expect(fine.json?["warning"] == nil)
            #expect(!daemon.log.entries.contains { $0["github.delivery"] == "ping-2" && $0["level"] == "warning" })

            let wildcard = try await daemon.deliver(
                event: "ping", id: "ping-3", body: try DaemonFixtures.data("ping.json"))
            #expect(wildcard.status == 200)
            #expect(wildcard.json?["warning"] == nil)
        }
    }

    // MARK: Bad requests

    @Test("a signed body that is not JSON, or lacks workflow_job.id, is 400 and recorded as rejected with the reason")
    func malformedBodies() async throws {
        try await withDaemon { daemon in
            let garbage = try await daemon.deliver(
                event: "workflow_job", id: "malformed-1", body: Data("this is { not json".utf8))
            #expect(garbage.status == 400)
            #expect(garbage.json?["error"] == "malformed_payload")
            let garbageDetail = try #require(garbage.json?["detail"]?.stringValue)
            #expect(garbageDetail.contains("not valid JSON"))
            expectSmallJSON(garbage)

            var job = GitHubPayload.json(Self.script.job(50_000, "lint", "queued", createdAt: 2))
            guard case .object(var root) = job, case .object(var inner)? = root["workflow_job"] else {
                Issue.record("the payload builder changed shape")
                return
            }
            inner["id"] = nil
            root["workflow_job"] = .object(inner)
            job = .object(root)
            let missing = try await daemon.deliver(event: "workflow_job", id: "malformed-2", body: job.canonicalData)
            #expect(missing.status == 400)
            let missingDetail = try #require(missing.json?["detail"]?.stringValue)
            #expect(missingDetail.contains("'workflow_job.id'"))
            expectSmallJSON(missing)

            let (first, second, runs) = try await daemon.read { database in
                (
                    try database.delivery(id: "malformed-1"), try database.delivery(id: "malformed-2"),
                    try database.listRuns()
                )
            }
            #expect(first?.outcome == .rejected)
            #expect(first?.reason == garbageDetail)
            #expect(second?.outcome == .rejected)
            #expect(second?.reason == missingDetail)
            #expect(runs.isEmpty)
        }
    }

    @Test("a signed delivery without X-GitHub-Event or X-GitHub-Delivery is 400, nothing stored")
    func missingHeaders() async throws {
        try await withDaemon { daemon in
            let noEvent = try await daemon.deliver(event: "", id: "no-event-1", body: Self.queuedJob())
            #expect(noEvent.status == 400)
            #expect(noEvent.json?["error"] == "missing_header")
            expectSmallJSON(noEvent)
            let noDelivery = try await daemon.deliver(event: "workflow_job", id: "", body: Self.queuedJob())
            #expect(noDelivery.status == 400)
            #expect(noDelivery.json?["error"] == "missing_header")
            #expect(try await deliveryCount(daemon) == 0)
        }
    }

    @Test("other methods are 405 with Allow")
    func methodNotAllowed() async throws {
        try await withDaemon { daemon in
            for method in ["GET", "PUT", "DELETE"] {
                let response = try await daemon.request(method: method, target: "/webhook")
                #expect(response.status == 405, "\(method) /webhook")
                #expect(response.headers["allow"] == "POST", "\(method) /webhook")
                expectSmallJSON(response)
            }
            let post = try await daemon.request(method: "POST", target: "/healthz")
            #expect(post.status == 405)
            #expect(post.headers["allow"]?.contains("GET") == true)
            expectSmallJSON(post)
        }
    }

    @Test("a body over max_body_bytes is 413 before it is read; nothing stored")
    func payloadTooLarge() async throws {
        try await withDaemon(configure: { $0.maxBodyBytes = 4_096 }) { daemon in
            let port = daemon.port
            let secret = daemon.configuration.webhookSecrets[0]
            // Declares more than the limit and sends only the head: the answer must not wait for the body.
            let declared = try await offPool {
                let client = try HTTPTestClient(port: port, timeout: 10)
                let head = HTTPTestClient.head(
                    method: "POST", target: "/webhook",
                    headers: [
                        ("Content-Type", "application/json"), ("X-GitHub-Event", "workflow_job"),
                        ("X-GitHub-Delivery", "too-large-1"),
                        ("X-Hub-Signature-256", "sha256=" + String(repeating: "0", count: 64)),
                    ], contentLength: 1_000_000)
                try client.send(head)
                return try client.readResponse()
            }
            #expect(declared.status == 413)
            #expect(declared.json?["error"] == "payload_too_large")
            #expect(declared.json?["limit_bytes"] == 4_096)
            expectSmallJSON(declared)

            // A whole, validly signed body one byte over the limit.
            var padded = Self.queuedJob()
            padded += Data(repeating: UInt8(ascii: " "), count: 4_097 - padded.count)
            let over = try await daemon.deliver(event: "workflow_job", id: "too-large-2", body: padded, secret: secret)
            #expect(over.status == 413)
            // Exactly at the limit is fine.
            let atLimit = try await daemon.deliver(
                event: "workflow_job", id: "at-limit", body: padded.dropLast(), secret: secret)
            #expect(atLimit.status == 202)
            let ids = try await daemon.read { try $0.listDeliveries().map(\.id) }
            #expect(ids == ["at-limit"])
        }
    }

    @Test("an unsupported content type is 415")
    func unsupportedMediaType() async throws {
        try await withDaemon { daemon in
            for contentType in ["text/plain", "application/xml", "multipart/form-data; boundary=x"] {
                let response = try await daemon.deliver(
                    event: "workflow_job", id: deliveryID(), body: Self.queuedJob(), contentType: contentType)
                #expect(response.status == 415, "\(contentType)")
                #expect(response.json?["error"] == "unsupported_media_type")
                expectSmallJSON(response)
            }
            let none = try await daemon.request(
                method: "POST", target: "/webhook",
                headers: [
                    ("X-GitHub-Event", "workflow_job"), ("X-GitHub-Delivery", "no-type"),
                    (
                        "X-Hub-Signature-256",
                        WebhookSignature.sign(body: Self.queuedJob(), secret: daemon.configuration.webhookSecrets[0])
                    ),
                ], body: Self.queuedJob())
            #expect(none.status == 415)
            // Parameters and case do not matter.
            let charset = try await daemon.deliver(
                event: "workflow_job", id: "charset", body: Self.queuedJob(),
                contentType: "Application/JSON; charset=utf-8")
            #expect(charset.status == 202)
            #expect(try await deliveryCount(daemon) == 1)
        }
    }

    // MARK: Form encoding

    @Test("form-encoded deliveries (payload=<urlencoded JSON>, signed over the form body) are accepted like JSON")
    func formEncoded() async throws {
        try await withDaemon { daemon in
            let json = try DaemonFixtures.data("workflow_job.queued.attempt10-test.json")
            let form = GitHubForm.encoded(json)
            #expect(form != json)
            let response = try await daemon.deliver(
                event: "workflow_job", id: "form-1", body: form, contentType: "application/x-www-form-urlencoded")
            #expect(response.status == 202, "\(response.text)")
            #expect(response.json?["run_id"] == 6_454_805_877)

            let fromForm = try await daemon.read { try $0.runAttempts(runID: 6_454_805_877).first?.state }
            let record = try await daemon.read { try $0.delivery(id: "form-1") }
            #expect(record?.outcome == .applied)
            #expect(record?.contentType == "application/x-www-form-urlencoded")
            #expect(record?.payload == form)
            // The same delivery as JSON, on a second daemon, stores the same run.
            let fromJSON = try await withDaemon { other in
                let answer = try await other.deliver(event: "workflow_job", id: "json-1", body: json)
                #expect(answer.status == 202)
                return try await other.read { try $0.runAttempts(runID: 6_454_805_877).first?.state }
            }
            #expect(fromForm != nil)
            #expect(fromForm?.jobs == fromJSON?.jobs)
            #expect(fromForm?.workflowName == fromJSON?.workflowName)

            // Signed over the decoded JSON instead of the raw form bytes: refused.
            let misSigned = try await daemon.request(
                method: "POST", target: "/webhook",
                headers: [
                    ("Content-Type", "application/x-www-form-urlencoded"), ("X-GitHub-Event", "workflow_job"),
                    ("X-GitHub-Delivery", "form-2"),
                    (
                        "X-Hub-Signature-256",
                        WebhookSignature.sign(body: json, secret: daemon.configuration.webhookSecrets[0])
                    ),
                ], body: form)
            #expect(misSigned.status == 401)
        }
    }

    // MARK: Other routes

    @Test("GET /healthz and /readyz are 200; any other path is 404")
    func otherRoutes() async throws {
        try await withDaemon { daemon in
            let health = try await daemon.request(method: "GET", target: "/healthz")
            #expect(health.status == 200)
            #expect(health.json?["status"] == "ok")
            expectSmallJSON(health)
            let ready = try await daemon.request(method: "GET", target: "/readyz")
            #expect(ready.status == 200)
            #expect(ready.json?["status"] == "ready")
            expectSmallJSON(ready)
            for target in ["/", "/webhooks", "/webhook/extra", "/metrics", "/healthz/x"] {
                let response = try await daemon.request(method: "GET", target: target)
                #expect(response.status == 404, "\(target)")
                expectSmallJSON(response)
            }
            let post = try await daemon.deliver(event: "workflow_job", id: "elsewhere", body: Self.queuedJob())
            #expect(post.status == 202)
            let misrouted = try await daemon.request(method: "POST", target: "/hook", body: Self.queuedJob())
            #expect(misrouted.status == 404)
        }
    }
}
