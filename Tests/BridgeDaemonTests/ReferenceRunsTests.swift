import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

/// The reference runs under `examples/reference/` (what `make bench` replays) are scripted runs
/// written as JSON Lines; this test keeps the files and the scripts in step.
/// `UPDATE_GOLDEN=1 swift test --filter ReferenceRuns` rewrites them.
@Suite("Reference runs")
struct ReferenceRunsTests {
    static let start: UnixTime = 1_700_000_000

    static let runs: [String: [WebhookEvent]] = [
        "matrix-success": RunScript(runID: 7_001, runNumber: 101, start: start, firstJobID: 90_000).deliveries(waves: [
            [RunScript.Job("lint", duration: 25)],
            (1...4).map { RunScript.Job("test (shard-\($0))", duration: Double(40 + 10 * $0)) },
            [
                RunScript.Job("call / package (linux)", duration: 45),
                RunScript.Job("call / package (mac)", duration: 70),
            ],
            [RunScript.Job("deploy", duration: 30)],
        ]),
        "matrix-failure": RunScript(runID: 7_002, runNumber: 102, start: start + 3_600, firstJobID: 91_000).deliveries(
            waves: [
                [RunScript.Job("lint", duration: 22)],
                (1...4).map {
                    RunScript.Job(
                        "test (shard-\($0))", duration: Double(35 + 10 * $0),
                        conclusion: $0 == 3 ? "failure" : "success")
                },
                [RunScript.Job("deploy", duration: 30, conclusion: "skipped")],
            ]),
    ]

    static func jsonLines(_ events: [WebhookEvent], prefix: String) -> String {
        events.enumerated().map { index, event in
            let (name, body) = PayloadEncoder.encode(event)
            let payload = (try? JSONValue(parsing: body)) ?? .null
            let line: JSONValue = [
                "event": .string(name), "delivery": .string("\(prefix)-\(index + 1)"), "payload": payload,
            ]
            return line.canonicalString + "\n"
        }.joined()
    }

    @Test("each reference run file matches its script", arguments: runs.keys.sorted())
    func referenceRun(name: String) throws {
        let text = Self.jsonLines(Self.runs[name]!, prefix: name)
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("examples/reference/\(name).jsonl")
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
            try text.write(to: file, atomically: true, encoding: .utf8)
            return
        }
        let stored = try String(contentsOf: file, encoding: .utf8)
        #expect(stored == text, "examples/reference/\(name).jsonl differs; UPDATE_GOLDEN=1 rewrites it")
        let parsed = try RecordedDelivery.parse(fileName: file.path, contents: Data(stored.utf8))
        #expect(parsed.count == Self.runs[name]!.count)
    }
}
