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
    static let script = RunScript()

    static let scenarios: [String: @Sendable () -> [WebhookEvent]] = [
        "linear-success": {
            script.deliveries(waves: [
                [RunScript.Job("lint", duration: 20)], [RunScript.Job("build", duration: 60)],
                [RunScript.Job("deploy", duration: 30)],
            ])
        },
        "matrix-failure": {
            script.deliveries(waves: [
                [RunScript.Job("build", duration: 40)],
                (1...12).map {
                    RunScript.Job(
                        "test (shard-\($0))", duration: Double(10 + $0), conclusion: $0 == 5 ? "failure" : "success")
                },
            ])
        },
        "seeded-second-run": {
            let second = RunScript(runID: 9_001, runNumber: 43, start: script.start + 3_600, firstJobID: 60_000)
            let waves: [[RunScript.Job]] = [
                [RunScript.Job("lint", duration: 20)],
                [
                    RunScript.Job("call / build (linux)", duration: 60),
                    RunScript.Job("call / build (mac)", duration: 90),
                ],
                [RunScript.Job("deploy", duration: 30)],
            ]
            return script.deliveries(waves: waves) + second.deliveries(waves: waves)
        },
        "approval-then-cancel": {
            [
                script.run("requested", at: 0),
                script.job(50_000, "build", "in_progress", createdAt: 1, startedAt: 2),
                script.job(
                    50_000, "build", "completed", createdAt: 1, startedAt: 2, completedAt: 30, conclusion: "success"),
                script.job(50_001, "deploy", "waiting", createdAt: 31, environment: "production"),
                script.job(50_001, "deploy", "completed", createdAt: 31, completedAt: 300, conclusion: "cancelled"),
                script.run("completed", at: 301, conclusion: "cancelled"),
            ]
        },
        "lost-completion": {
            script.deliveries(
                waves: [[RunScript.Job("build", duration: 30)], [RunScript.Job("test", duration: 30)]], complete: false)
        },
    ]

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
        #expect(rendered == expected, "golden/\(name).jsonl differs; UPDATE_GOLDEN=1 rewrites it")
    }
}
