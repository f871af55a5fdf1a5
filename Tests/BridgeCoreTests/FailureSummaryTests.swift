import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

/// What a failed run's end frame says: the failing job (a matrix shard by its full name), its
/// failed step, how many of its group failed, and the failing job's page as the card's link;
/// a run whose jobs were all skipped ends grey `Skipped`, not green.
@Suite("failure summary")
struct FailureSummaryTests {
    static func play(_ waves: [[RunScript.Job]], conclusion: String? = nil) -> BridgeHarness {
        var harness = BridgeHarness()
        harness.play(RunScript().deliveries(waves: waves, conclusion: conclusion))
        return harness
    }

    @Test("a matrix group with two of four shards failed: the first shard, its step, 2 of 4, its job's link")
    func matrixFailure() throws {
        let harness = Self.play([
            [RunScript.Job("lint")],
            [
                RunScript.Job("test (shard-1)"), RunScript.Job("test (shard-2)", conclusion: "failure"),
                RunScript.Job("test (shard-3)", conclusion: "failure"), RunScript.Job("test (shard-4)"),
            ],
        ])
        #expect(harness.violations.isEmpty)
        let stored = try #require(harness.stored())
        #expect(stored.content["state"] == "Failed: test (shard-2) · Run · 2 of 4 failed")
        #expect(stored.content["accent_color"] == "red")
        #expect(stored.content["url"] == "https://github.com/acme/widgets/actions/runs/9000/job/50002")
        #expect(stored.content["url_action"]?["title"] == "Failed job")
        // Rides on the end frame the card sends anyway: the link is set by the first frame and
        // changed by the final frame, in no request of its own.
        let carryingURL = harness.sent.filter { $0.planned.request.body["content"]?["url"] != nil }
        #expect(carryingURL.map(\.planned.kind) == [.firstFrame, .finalFrame])
    }

    @Test("a single job: its name and step, no count; hostile names made plain and clamped")
    func singleJobHostile() throws {
        let name = "deploy \u{202E}evil\u{2028}" + String(repeating: "🇩🇪", count: 200)
        let harness = Self.play([[RunScript.Job(name, conclusion: "failure")]])
        #expect(harness.violations.isEmpty, "\(harness.violations)")
        let state = try #require(harness.stored()?.content["state"]?.stringValue)
        #expect(state.hasPrefix("Failed: deploy evil "))
        #expect(state.unicodeScalars.count <= 256)
        #expect(!state.unicodeScalars.contains { $0.value == 0x202E || $0.value == 0x2028 })
    }

    @Test("every job skipped: grey Skipped, though GitHub concludes the run success; a success stays green")
    func allSkipped() throws {
        let skipped = Self.play(
            [[RunScript.Job("deploy", conclusion: "skipped"), RunScript.Job("notify", conclusion: "skipped")]],
            conclusion: "success")
        #expect(skipped.stored()?.content["state"] == "Skipped")
        #expect(skipped.stored()?.content["accent_color"] == .string(EndAppearance.grey))
        let mixed = Self.play(
            [[RunScript.Job("build"), RunScript.Job("deploy", conclusion: "skipped")]], conclusion: "success")
        #expect(mixed.stored()?.content["state"] == "Succeeded")
    }
}
