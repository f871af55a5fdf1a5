import Foundation
import Testing

@testable import BridgeCore

/// Parses a recording and returns the error it throws, or nil when it parses.
private func loadError(_ fileName: String, _ text: String) -> RecordedDelivery.LoadError? {
    do throws(RecordedDelivery.LoadError) {
        _ = try RecordedDelivery.parse(fileName: fileName, contents: Data(text.utf8))
        return nil
    } catch {
        return error
    }
}

@Suite("Recorded deliveries")
struct RecordedDeliveryTests {
    // MARK: - Bare payload files

    @Test("a bare payload takes its event from the name and keeps its bytes exactly")
    func barePayload() throws {
        // Odd spacing and key order: the body must not be re-serialised.
        let bytes = Data("{ \"action\" : \"completed\",\n  \"b\": 1, \"a\": 2 }\n".utf8)
        let deliveries = try RecordedDelivery.parse(fileName: "workflow_job.completed.x.json", contents: bytes)
        #expect(deliveries.count == 1)
        let delivery = try #require(deliveries.first)
        #expect(delivery.event == "workflow_job")
        #expect(delivery.deliveryID == nil)
        #expect(delivery.body == bytes)
    }

    @Test("a bare fixture file keeps its exact bytes, and the event comes from the last path component")
    func bareFixtureFromADottedDirectory() throws {
        let bytes = try Fixtures.data("workflow_run.completed.attempt10.json")
        let deliveries = try RecordedDelivery.parse(
            fileName: "captures.v2/workflow_run.completed.attempt10.json", contents: bytes)
        #expect(deliveries == [RecordedDelivery(event: "workflow_run", deliveryID: nil, body: bytes)])
    }

    @Test("a one-dot name is enough: the event is what comes before the first dot")
    func shortName() throws {
        let deliveries = try RecordedDelivery.parse(fileName: "ping.json", contents: Data("{}".utf8))
        #expect(deliveries.map(\.event) == ["ping"])
    }

    @Test("an empty or blank bare payload is an error naming the file", arguments: ["", "  \n\t\r\n"])
    func emptyBarePayload(text: String) throws {
        let error = try #require(loadError("rec/workflow_job.completed.json", text))
        #expect(error.file == "rec/workflow_job.completed.json")
        #expect(error.detail == "the file is empty")
        #expect(error.description == "rec/workflow_job.completed.json: the file is empty")
    }

    @Test("a name without a dot is an error naming the file", arguments: ["workflow_job", "some.dir/workflow_job"])
    func nameWithoutDot(fileName: String) throws {
        let error = try #require(loadError(fileName, #"{"action": "queued"}"#))
        #expect(error.file == fileName)
        #expect(error.detail.contains("cannot tell the event"))
        #expect(error.description.hasPrefix("\(fileName): "))
    }

    // MARK: - JSON Lines

    static let jsonLines = """
        {"event": "workflow_job", "delivery": "d-1", "payload": {"action": "queued", "z": [1, 2], "a": null}}

        {"payload": {"action": "completed"}, "event": "workflow_run", "delivery": "d-2"}
        """

    @Test("a .jsonl file gives one delivery per non-blank line, with the payload as the body")
    func jsonLinesDeliveries() throws {
        let deliveries = try RecordedDelivery.parse(fileName: "run.jsonl", contents: Data(Self.jsonLines.utf8))
        #expect(deliveries.count == 2)
        #expect(deliveries.map(\.event) == ["workflow_job", "workflow_run"])
        #expect(deliveries.map(\.deliveryID) == ["d-1", "d-2"])
        let first = try JSONValue(parsing: deliveries[0].body)
        #expect(first == ["action": "queued", "z": [1, 2], "a": nil])
        // The body is the payload alone, written canonically.
        #expect(String(decoding: deliveries[0].body, as: UTF8.self) == #"{"a":null,"action":"queued","z":[1,2]}"#)
        #expect(String(decoding: deliveries[1].body, as: UTF8.self) == #"{"action":"completed"}"#)
    }

    @Test("the delivery id is optional; .ndjson works too; CRLF and a trailing newline are fine")
    func jsonLinesVariants() throws {
        let text = "{\"event\": \"ping\", \"payload\": {\"zen\": \"x\"}}\r\n{\"event\": \"ping\", \"payload\": {}}\r\n"
        let deliveries = try RecordedDelivery.parse(fileName: "dir/hooks.ndjson", contents: Data(text.utf8))
        #expect(deliveries.map(\.event) == ["ping", "ping"])
        #expect(deliveries.map(\.deliveryID) == [nil, nil])
        #expect(deliveries.map { String(decoding: $0.body, as: UTF8.self) } == [#"{"zen":"x"}"#, "{}"])
    }

    @Test("the sample run in examples/ loads")
    func sampleRunLoads() throws {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let path = root.appendingPathComponent("examples/sample-run.jsonl").path
        let contents = try #require(FileManager.default.contents(atPath: path))
        let deliveries = try RecordedDelivery.parse(fileName: path, contents: contents)
        #expect(deliveries.count == 5)
        #expect(deliveries.first?.deliveryID == "sample-1")
        #expect(deliveries.allSatisfy { !$0.event.isEmpty && !$0.body.isEmpty })
    }

    @Test(
        "a bad line is an error naming the file and the line",
        arguments: [
            // (contents, line, detail)
            ("not json", 1, "not valid JSON"),
            (#"{"event": "ping", "payload": {}}"# + "\n{\"event\": ", 2, "not valid JSON"),
            (#"["event", "ping"]"#, 1, "not a JSON object"),
            (#"{"payload": {}}"#, 1, #"missing "event""#),
            (#"{"event": "", "payload": {}}"#, 1, #"missing "event""#),
            (#"{"event": 5, "payload": {}}"#, 1, #"missing "event""#),
            (#"{"event": "ping"}"#, 1, #"missing "payload" object"#),
            (#"{"event": "ping", "payload": "{}"}"#, 1, #"missing "payload" object"#),
            (#"{"event": "ping", "payload": {}}"# + "\n" + #"{"event": "ping"}"#, 2, #"missing "payload" object"#),
        ])
    func badLine(text: String, line: Int, detail: String) throws {
        let error = try #require(loadError("captures/run.jsonl", text))
        #expect(error.file == "captures/run.jsonl")
        #expect(error.detail == "line \(line): \(detail)")
        #expect(error.description == "captures/run.jsonl: line \(line): \(detail)")
    }

    @Test("line numbers count blank lines, as an editor would")
    func lineNumbersCountBlankLines() throws {
        let good = #"{"event": "ping", "payload": {}}"#
        let text = "\(good)\n\n\(good)\n   \n\nnot json\n"
        let error = try #require(loadError("run.jsonl", text))
        #expect(error.detail == "line 6: not valid JSON")
    }

    @Test("an empty or blank .jsonl file is an error naming the file", arguments: ["", "\n", " \n\n\t\n"])
    func emptyJSONLines(text: String) throws {
        let error = try #require(loadError("captures/run.jsonl", text))
        #expect(error.file == "captures/run.jsonl")
        #expect(error.description == "captures/run.jsonl: the file is empty")
    }
}
