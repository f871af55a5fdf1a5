import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

/// `WebhookDecoder` on the recorded deliveries, edited and mutated ones: each recorded body decodes
/// as its event, the same raw and form-encoded; valid JSON that is not the payload expected fails
/// naming a field; a body that is not JSON fails as `.invalidJSON`.
@Suite("Webhook decoder on recorded and edited deliveries")
struct WebhookDecoderFixtureTests {
    // MARK: Recorded deliveries

    /// Every recorded body through `WebhookDecoder.decode` as its own event decodes, and form-encoded
    /// without a content type (the form is guessed) gives the same event or the same error.
    @Test(arguments: try Fixtures.names())
    func everyFixtureDecodesRawAndAsAForm(name: String) throws {
        let body = try Fixtures.data(name)
        let event = eventName(of: name)
        let raw = webhookOutcome(event: event, body: body)
        // The `.capture.json` fixture wraps a body with its headers.
        if ["workflow_job", "workflow_run", "ping"].contains(event), !name.contains(".capture.") {
            #expect((try? raw.get()) != nil, "\(name) does not decode: \(raw)")
        }
        let form = GitHubForm.encoded(body)
        #expect(webhookOutcome(event: event, body: form, contentType: nil) == raw, "\(name) as a form")
    }

    /// Every fixture and every line of the golden request streams parses into `JSONValue`, and its
    /// canonical form parses back to the same value.
    @Test func wholeDocumentsParseAndRoundTrip() throws {
        var documents = try Fixtures.names().map { try Fixtures.data($0) }
        let golden = Fixtures.directory.appendingPathComponent("golden")
        for file in try FileManager.default.contentsOfDirectory(atPath: golden.path).sorted()
        where file.hasSuffix(".jsonl") {
            let lines = try Data(contentsOf: golden.appendingPathComponent(file)).split(separator: UInt8(ascii: "\n"))
            documents += lines.map { Data($0) }
        }
        #expect(documents.count > 40)
        for document in documents {
            guard let value = try? JSONValue(parsing: document) else {
                Issue.record("does not decode: \(String(decoding: document.prefix(80), as: UTF8.self))")
                continue
            }
            #expect(try JSONValue(parsing: value.canonicalData) == value)
        }
    }

    /// Fixtures edited the ways senders get them wrong: each still valid JSON, so each decodes or
    /// fails naming a field (a dotted path), never as `.invalidJSON` — a number that is not a
    /// 64-bit integer included, which `JSONDecoder` alone reports as invalid JSON with no path.
    @Test func editedDeliveriesDecodeOrNameTheField() throws {
        let jobEdits: [(inout [String: Any]) -> Void] = [
            { $0["id"] = nil }, { $0["id"] = NSNull() }, { $0["id"] = "17556741424" }, { $0["id"] = 1.5 },
            { $0["id"] = 1e30 }, { $0["id"] = 1.0 }, { $0["id"] = true }, { $0["id"] = [1] },
            { $0["run_id"] = -0.0 }, { $0["run_attempt"] = 1e2 }, { $0["run_attempt"] = NSNull() },
            { $0["name"] = 42 }, { $0["name"] = NSNull() }, { $0["name"] = "ünïcødé 😀 \u{0} \"quoted\" \\" },
            { $0["status"] = nil }, { $0["status"] = ["completed"] }, { $0["labels"] = "ubuntu-latest" },
            { $0["labels"] = [1] }, { $0["labels"] = NSNull() }, { $0["labels"] = ["a", NSNull()] },
            { $0["steps"] = [1] }, { $0["steps"] = NSNull() }, { $0["steps"] = [:] as [String: Any] },
            { $0["created_at"] = "2023-10-13" }, { $0["completed_at"] = 5 }, { $0["head_branch"] = false },
            { $0["html_url"] = nil }, { $0["run_url"] = 3 },
            { job in Self.editSteps(&job) { $0[2]["started_at"] = "yesterday" } },
            { job in Self.editSteps(&job) { $0[3]["number"] = nil } },
            { job in Self.editSteps(&job) { $0[1]["number"] = NSNull() } },
            { job in Self.editSteps(&job) { $0[1]["number"] = 0 } },
            { job in Self.editSteps(&job) { $0[1]["number"] = -7 } },
            { job in Self.editSteps(&job) { $0[1]["number"] = "2" } },
            { job in Self.editSteps(&job) { $0[1]["number"] = 2.5 } },
            { job in Self.editSteps(&job) { $0[1]["number"] = 1e30 } },
            { job in Self.editSteps(&job) { $0[2]["completed_at"] = 5 } },
            { job in Self.editSteps(&job) { $0[0]["name"] = nil } },
            { job in Self.editSteps(&job) { $0[0]["conclusion"] = 3 } },
            { $0["status"] = NSNull() },
            { job in Self.editSteps(&job) { $0[0]["name"] = ["x"] } },
            { job in Self.editSteps(&job) { $0[4]["status"] = 7 } },
        ]
        for edit in jobEdits {
            let body = try edited("workflow_job.completed.attempt10-test.json") { payload in
                var job = payload["workflow_job"] as? [String: Any] ?? [:]
                edit(&job)
                payload["workflow_job"] = job
            }
            expectDecodesOrNamesAField(event: "workflow_job", body: body)
        }
        let payloadEdits: [(String, (inout [String: Any]) -> Void)] = [
            ("workflow_job.queued.with-deployment.json", { $0["deployment"] = NSNull() }),
            ("workflow_job.queued.with-deployment.json", { $0["deployment"] = ["environment": 5] }),
            ("workflow_job.queued.with-deployment.json", { $0["deployment"] = [1] }),
            ("workflow_job.queued.json", { $0["repository"] = NSNull() }),
            ("workflow_job.queued.json", { $0["repository"] = ["full_name": 5] }),
            ("workflow_job.queued.json", { $0["repository"] = "octo/repo" }),
            ("workflow_job.queued.json", { $0["workflow_job"] = NSNull() }),
            ("workflow_job.queued.json", { $0["workflow_job"] = [] as [Any] }),
            ("workflow_job.queued.json", { $0["action"] = 1 }),
            (
                "workflow_run.completed.with-pull-requests.json",
                { Self.editRun(&$0) { $0["pull_requests"] = [["number": "2"]] } }
            ),
            (
                "workflow_run.completed.with-pull-requests.json",
                { Self.editRun(&$0) { $0["pull_requests"] = [[:] as [String: Any]] } }
            ),
            (
                "workflow_run.completed.with-pull-requests.json",
                { Self.editRun(&$0) { $0["pull_requests"] = [:] as [String: Any] } }
            ),
            ("workflow_run.completed.attempt10.json", { Self.editRun(&$0) { $0["id"] = nil } }),
            (
                "workflow_run.completed.attempt10.json",
                { Self.editRun(&$0) { $0["run_started_at"] = "2023-10-13T25:00:00Z" } }
            ),
            ("workflow_run.completed.attempt10.json", { Self.editRun(&$0) { $0["repository"] = NSNull() } }),
            ("workflow_run.requested.json", { $0["workflow"] = "CI" }),
            ("workflow_run.requested.json", { $0["workflow"] = ["name": 5, "path": ["x"]] }),
            ("workflow_run.requested.json", { $0["workflow"] = NSNull() }),
            ("workflow_run.completed.attempt10.json", { Self.editRun(&$0) { $0["name"] = nil } }),
            ("ping.json", { $0["hook"] = NSNull() }),
            ("ping.json", { $0["hook"] = ["id": "x"] }),
            ("ping.json", { $0["hook"] = ["config": 5] }),
            ("ping.json", { $0["hook"] = ["events": [1]] }),
            ("ping.json", { $0["hook_id"] = 2.5 }),
        ]
        for (name, edit) in payloadEdits {
            expectDecodesOrNamesAField(event: eventName(of: name), body: try edited(name, edit))
        }
        for body in ["[]", "\"workflow_job\"", "null", "{}", "{\"workflow_job\":{}}", "1", "{\"zen\":\"a\",\"zen\":1}"]
        {
            for event in ["workflow_job", "workflow_run", "ping"] {
                expectDecodesOrNamesAField(event: event, body: Data(body.utf8))
            }
        }
    }

    /// Deterministic fuzzing: truncated, spliced and byte-flipped fixtures. One still strictly JSON
    /// decodes or names a field; one cut short fails as `.invalidJSON` (or `.emptyBody`, cut before
    /// the first byte). Others may decode: `JSONDecoder` checks the numbers and escapes of only the
    /// values it is asked for, so a flipped byte in a field the bridge does not read passes.
    @Test func mutatedDeliveriesDecodeOrFailWithoutCrashing() throws {
        var random = FuzzRandom(seed: 0x5EED)
        let names = try Fixtures.names().filter { !$0.hasPrefix("check_") && !$0.hasPrefix("rest-api") }
        let replacements = Array(#"{}[],:"\ 0123456789.eE+-tfnul/x"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xFF]
        for round in 0..<400 {
            let name = names[Int(random.next() % UInt64(names.count))]
            var bytes = Array(try Fixtures.data(name))
            let position = Int(random.next() % UInt64(bytes.count))
            switch round % 4 {
            case 0: bytes.removeSubrange(position...)
            case 1: bytes[position] = replacements[Int(random.next() % UInt64(replacements.count))]
            case 2: bytes.insert(replacements[Int(random.next() % UInt64(replacements.count))], at: position)
            default: bytes.remove(at: position)
            }
            let body = Data(bytes)
            if (try? JSONSerialization.jsonObject(with: body, options: .fragmentsAllowed)) != nil {
                expectDecodesOrNamesAField(event: eventName(of: name), body: body)
            } else if round % 4 == 0 {
                let outcome = webhookOutcome(event: eventName(of: name), body: body)
                switch outcome {
                case .failure(.invalidJSON), .failure(.emptyBody): break
                default: Issue.record("round \(round): cut short, yet \(outcome)")
                }
            }
        }
    }
}

// MARK: - Helpers

extension WebhookDecoderFixtureTests {
    func webhookOutcome(
        event: String, body: Data, contentType: String? = "application/json"
    ) -> Result<WebhookEvent, WebhookDecodingError> {
        Result { () throws(WebhookDecodingError) in
            try WebhookDecoder.decode(event: event, body: body, contentType: contentType)
        }
    }

    /// `body` is JSON: it decodes, or the error names the field at fault.
    func expectDecodesOrNamesAField(event: String, body: Data, sourceLocation: SourceLocation = #_sourceLocation) {
        let outcome = webhookOutcome(event: event, body: body)
        switch outcome {
        case .success, .failure(.missingField), .failure(.invalidField): break
        case .failure(let error):
            Issue.record(
                "\(event): \(error) for \(String(decoding: body.prefix(200), as: UTF8.self))",
                sourceLocation: sourceLocation)
        }
    }

    func eventName(of fixture: String) -> String {
        String(fixture.prefix { $0 != "." })
    }

    /// A fixture re-serialised after `edit` changed its top-level object.
    func edited(_ name: String, _ edit: (inout [String: Any]) -> Void) throws -> Data {
        var payload = try #require(JSONSerialization.jsonObject(with: Fixtures.data(name)) as? [String: Any])
        edit(&payload)
        return try JSONSerialization.data(withJSONObject: payload)
    }

    static func editSteps(_ job: inout [String: Any], _ edit: (inout [[String: Any]]) -> Void) {
        var steps = job["steps"] as? [[String: Any]] ?? []
        edit(&steps)
        job["steps"] = steps
    }

    static func editRun(_ payload: inout [String: Any], _ edit: (inout [String: Any]) -> Void) {
        var run = payload["workflow_run"] as? [String: Any] ?? [:]
        edit(&run)
        payload["workflow_run"] = run
    }
}

/// A small deterministic generator for the fuzzing test.
private struct FuzzRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
