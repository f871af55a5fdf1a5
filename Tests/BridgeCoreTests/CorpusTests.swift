import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

/// Payloads nobody on this project wrote (`Fixtures/corpus/`, with where each came from in its
/// `SOURCES.md`): GitHub's documentation examples, other projects' captured deliveries, and
/// Gitea-shaped ones. Every one is read as the event its file name says, and goes through the engine: none is refused, and the card it draws is within the
/// contract.
@Suite("Third-party payload corpus")
struct CorpusTests {
    static let directory = Fixtures.directory.appendingPathComponent("corpus")

    static func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.sorted()
    }

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    /// `workflow_run` from `workflow_run.octokit.completed.json`.
    static func eventName(of name: String) -> String { String(name.prefix { $0 != "." }) }

    static func decode(_ name: String) throws -> WebhookEvent {
        try WebhookDecoder.decode(event: eventName(of: name), body: data(name), contentType: "application/json")
    }

    @Test func theCorpusIsComplete() throws {
        let names = try Self.names()
        #expect(names.count == 40)
        let sources = try String(contentsOf: Self.directory.appendingPathComponent("SOURCES.md"), encoding: .utf8)
        for name in names { #expect(sources.contains("`\(name)`"), "\(name) has no source") }
    }

    @Test("each payload decodes as the event its file name says", arguments: try names())
    func decodesAsItsNameSays(name: String) throws {
        let event = try Self.decode(name)
        let payload = try #require(JSONSerialization.jsonObject(with: Self.data(name)) as? [String: Any])
        let action = payload["action"] as? String ?? ""
        switch (Self.eventName(of: name), event) {
        case ("workflow_job", .workflowJob(let job)):
            #expect(job.action == action)
            #expect(!job.job.name.isEmpty)
        case ("workflow_run", .workflowRun(let run)):
            #expect(run.action == action)
            #expect(run.run.id > 0)
        default:
            Issue.record("\(name) decoded as \(event)")
        }
    }

    @Test("each payload through the engine: applied, and a card PushWard accepts", arguments: try names())
    func theEngineTakesEach(name: String) throws {
        var harness = BridgeHarness()
        harness.play([try Self.decode(name)])
        #expect(harness.session.outcomes.count == 1)
        for outcome in harness.session.outcomes {
            guard case .applied = outcome else {
                Issue.record("\(name): \(outcome)")
                continue
            }
        }
        #expect(harness.violations.isEmpty, "\(name): \(harness.violations)")
        // A run GitHub holds for a maintainer's approval has not run: it draws no card until it
        // starts (`CardWithholding`). Every other recorded delivery draws one.
        let held = harness.engine.runs.values.contains(where: \.isHeldForApproval)
        #expect(held == name.contains("action_required"), "\(name)")
        #expect(harness.sent.isEmpty == held, "\(name): \(held ? "a held run drew a card" : "drew no card")")
    }

    @Test("the whole corpus through one engine, in name order: every card accepted")
    func theWholeCorpusTogether() throws {
        var harness = BridgeHarness()
        harness.play(try Self.names().map { try Self.decode($0) })
        #expect(harness.violations.isEmpty, "\(harness.violations)")
        #expect(harness.session.outcomes.allSatisfy { if case .applied = $0 { true } else { false } })
    }

    // MARK: A run known only from workflow_run deliveries

    /// The last content a harness sent for the one card, merged as PushWard holds it.
    static func shown(_ names: [String]) throws -> [String: JSONValue] {
        var harness = BridgeHarness()
        harness.play(try names.map { try decode($0) })
        #expect(harness.violations.isEmpty, "\(harness.violations)")
        return try #require(harness.stored()?.content)
    }

    @Test("a Gitea run without job deliveries: one step named after the workflow, in the run's status")
    func giteaRunOnly() throws {
        let queued = try Self.shown(["workflow_run.gitea-shaped-synthetic.requested.json"])
        #expect(queued["step_labels"] == ["CI"])
        #expect(queued["state"] == "Queued")
        #expect(queued["step_colors"] == [.string(ActivityContentBuilder.liveAccent)])

        let running = try Self.shown([
            "workflow_run.gitea-shaped-synthetic.requested.json",
            "workflow_run.gitea-shaped-synthetic.in-progress.json",
        ])
        #expect(running["step_labels"] == ["CI"])
        #expect(running["state"] == "In progress")
        #expect(running["step_colors"]?.arrayValue?.allSatisfy { $0 != "" } == true)
    }

    @Test("a run known only from its deliveries ends in its conclusion's words and colour")
    func runOnlyEnd() throws {
        var harness = BridgeHarness()
        harness.play([
            try Self.decode("workflow_run.gitea-shaped-synthetic.in-progress.json"),
            try Self.decode("workflow_run.gitea-shaped-synthetic.completed-failure.json"),
        ])
        #expect(harness.violations.isEmpty, "\(harness.violations)")
        let final = try #require(harness.sent.last { $0.planned.kind == .finalFrame }?.planned.request.body["content"])
        #expect(final["state"]?.stringValue?.hasPrefix("Failed") == true)
        #expect(final["step_colors"] == [.string(StepPalette.failed)])
        #expect(final["step_labels"] == ["CI"] || final["step_labels"] == nil)
    }

    /// The workflow's name is the sender's text: bidi controls, NUL, emoji and length go on the
    /// card clipped to the label limit, within the contract.
    @Test func aHostileWorkflowNameIsClippedOnTheRunStep() throws {
        let name = "deploy \u{202E}gpj.exe\u{0} 🚀🚀 " + String(repeating: "ß", count: 300)
        let script = RunScript(workflow: name)
        var harness = BridgeHarness()
        harness.play([script.run("requested", at: 0), script.run("in_progress", at: 1)])
        #expect(harness.violations.isEmpty, "\(harness.violations)")
        let content = try #require(harness.stored()?.content)
        let label = try #require(content["step_labels"]?.arrayValue?.first?.stringValue)
        #expect(label == ActivityContentBuilder.label(name))
        #expect(label.count == ActivityContentBuilder.labelLimit)
        #expect(content["step_colors"] == ["green"], "a deploy workflow's tint")
        #expect(content["state"] == "In progress")
    }

    /// GitHub's own payloads: `drone-go-scm` captured a run `in_progress` with no job of it.
    @Test(arguments: [
        "workflow_run.drone-go-scm.in_progress.json", "workflow_run.pkg-pr-new.in_progress-attempt2.json",
    ])
    func githubRunInProgressOnly(name: String) throws {
        guard case .workflowRun(let event) = try Self.decode(name) else {
            Issue.record("not a run")
            return
        }
        let shown = try Self.shown([name])
        let workflow = try #require(event.run.name)
        #expect(shown["step_labels"] == [.string(ActivityContentBuilder.label(workflow))])
        #expect(shown["state"] == "In progress")
        #expect(shown["step_colors"]?.arrayValue?.first != "")
    }

    // MARK: Gitea's jobs

    @Test("Gitea's jobs, steps numbered from 0: read, and the card names the job")
    func giteaJobs() throws {
        let names = [
            "workflow_run.gitea-shaped-synthetic.requested.json", "workflow_job.gitea-shaped-synthetic.queued.json",
            "workflow_job.gitea-shaped-synthetic.in-progress.json",
            "workflow_job.gitea-shaped-synthetic.completed.json",
        ]
        guard case .workflowJob(let job) = try Self.decode(names[2]) else {
            Issue.record("not a job")
            return
        }
        #expect(job.job.steps.map(\.number) == [0, 1])
        let content = try Self.shown(Array(names.prefix(3)))
        #expect(content["step_labels"] == ["Build"])
        #expect(content["current_step"] == 1)
        #expect(content["state"] == "Build")
        var harness = BridgeHarness()
        harness.play(try names.map { try Self.decode($0) })
        #expect(harness.violations.isEmpty, "\(harness.violations)")
    }
}
