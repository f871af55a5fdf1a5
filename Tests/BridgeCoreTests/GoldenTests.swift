import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

/// Scripted runs rendered to the PushWard requests they produce, checked in as sorted-key JSON
/// Lines under `Fixtures/golden/`: any change in what reaches phones shows up in review.
///
/// To accept an intended change: `UPDATE_GOLDEN=1 swift test --filter Golden`, then review the diff.
@Suite("Golden request streams")
struct GoldenTests {
    static let scenarios = GoldenScenarios.all

    static func render(_ events: [WebhookEvent]) -> (String, [ContractViolation]) {
        var harness = BridgeHarness()
        harness.play(events)
        let lines = harness.sent.map { $0.json.canonicalString + "\n" }.joined()
        return (lines, harness.violations)
    }

    @Test("each scenario renders exactly its checked-in request stream", arguments: scenarios.keys.sorted())
    func golden(name: String) throws {
        let (rendered, violations) = Self.render(Self.scenarios[name]!())
        #expect(violations.isEmpty)
        let sourceFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/golden/\(name).jsonl")
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
            try rendered.write(to: sourceFile, atomically: true, encoding: .utf8)
            return
        }
        let expected = try String(decoding: Fixtures.data("golden/\(name).jsonl"), as: UTF8.self)
        let diff = LineDiff.describe(expected: expected, actual: rendered)
        #expect(rendered == expected, "golden/\(name).jsonl differs (UPDATE_GOLDEN=1 rewrites it):\n\(diff)")
    }
}
