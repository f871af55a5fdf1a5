import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

/// Runs that draw no card: a fork's run GitHub holds for a maintainer's approval (until it
/// starts), and every fork's run under `filters.forks: false`. None costs a request.
@Suite("withheld cards")
struct CardWithholdingTests {
    /// A first-time contributor's run as GitHub sends it: `requested` already `completed` with
    /// `action_required` (the recorded corpus delivery has the same shape).
    static func held(_ runID: Int, start: UnixTime = 1_700_000_000) throws -> [WebhookEvent] {
        let payload = ForkRunPayload(runID: runID, start: start)
        return [
            try payload.event("requested", at: 0, conclusion: "action_required"),
            try payload.event("completed", at: 1, conclusion: "action_required"),
        ]
    }

    @Test("120 runs held for approval: no request at all, no summary card, each says why")
    func heldRunsCostNothing() throws {
        var harness = BridgeHarness()
        for index in 0..<120 {
            for event in try Self.held(10_000 + index, start: 1_700_000_000 + Double(index) * 60) {
                harness.feed(event)
            }
        }
        harness.finish()
        #expect(harness.sent.isEmpty, "\(harness.sent.map(\.planned.request.slug))")
        #expect(harness.server.activities.isEmpty)
        #expect(harness.engine.runs.count == 120)
        for state in harness.engine.runs.values {
            #expect(state.isHeldForApproval)
            #expect(state.completion == nil, "a held run has not run: it has not ended either")
            #expect(CardWithholding.of(state, filter: DeliveryFilter()) == .heldForApproval)
        }
        #expect(CardWithholding.heldForApproval.reason.contains("approval"))
    }

    @Test("approved, in either order of deliveries: the run gets its card and reaches its end frame")
    func approvedRunGetsItsCard() throws {
        let payload = ForkRunPayload(runID: 7)
        let held = try Self.held(7)
        var jobs = payload.jobs
        jobs.start = payload.start + 60
        let approved =
            [try payload.event("in_progress", at: 61)]
            + jobs.deliveries(waves: [[RunScript.Job("test")]], complete: false)
            + [try payload.event("completed", at: 200, conclusion: "success")]
        for order in [held + approved, [held[0]] + approved.prefix(2) + [held[1]] + approved.dropFirst(2)] {
            var harness = BridgeHarness()
            harness.play(order)
            #expect(harness.violations.isEmpty)
            let stored = try #require(harness.stored(), "the approved run drew a card")
            #expect(stored.state == "ended")
            #expect(stored.content["state"] == "Succeeded", "\(stored.content["state"] ?? .null)")
            let state = try #require(harness.engine.runs.values.first)
            #expect(!state.isHeldForApproval)
            #expect(state.completion?.conclusion == "success", "a late held snapshot does not undo the approval")
        }
    }

    @Test("queued before it was held: the card says Needs approval, and the approved run takes a card again")
    func queuedThenHeldThenApproved() throws {
        let payload = ForkRunPayload(runID: 9)
        var jobs = payload.jobs
        jobs.start = payload.start + 60
        var harness = BridgeHarness()
        harness.feed(try payload.event("requested", at: 0))
        harness.feed(try payload.event("completed", at: 1, conclusion: "action_required"))
        harness.finish()
        #expect(harness.stored()?.content["state"] == "Needs approval")
        #expect(harness.stored()?.state == "ended")
        harness.play(
            [try payload.event("in_progress", at: 61)]
                + jobs.deliveries(waves: [[RunScript.Job("test")]], complete: false)
                + [try payload.event("completed", at: 200, conclusion: "success")])
        #expect(harness.violations.isEmpty)
        #expect(harness.stored()?.content["state"] == "Succeeded")
        #expect(harness.stored()?.state == "ended")
    }

    @Test("a held run beside a running one takes nothing from it: one card, the running run's")
    func heldBesideRunning() throws {
        var harness = BridgeHarness()
        let running = RunScript(runID: 1, runNumber: 1, workflow: "Deploy prod", start: 1_700_000_000)
        let events = running.deliveries(waves: [[RunScript.Job("build")]])
        harness.feed(events[0])
        for event in try Self.held(2, start: 1_700_000_001) { harness.feed(event) }
        harness.play(Array(events.dropFirst()))
        #expect(harness.violations.isEmpty)
        #expect(Set(harness.sent.map(\.planned.run.runID)) == [1])
    }

    static func forksOff() -> DeliveryFilter {
        var filter = DeliveryFilter()
        filter.forks = false
        return filter
    }

    @Test("filters.forks false: a fork's run gets no card and moves no widget; the repository's own run does")
    func forksOffWithholdsCardsAndWidgets() throws {
        let widget = WidgetSettings(slug: "all", name: "All", forks: true)
        var harness = BridgeHarness(filter: Self.forksOff(), widgets: [widget])
        let fork = ForkRunPayload(runID: 5)
        var jobs = fork.jobs
        jobs.start = fork.start
        harness.feed(try fork.event("requested"))
        harness.play(
            jobs.deliveries(waves: [[RunScript.Job("test")]], complete: false)
                + [try fork.event("completed", at: 100, conclusion: "failure")])
        #expect(harness.sent.isEmpty)
        #expect(harness.session.widgetRequests.isEmpty)
        let state = try #require(harness.engine.runs.values.first)
        #expect(CardWithholding.of(state, filter: Self.forksOff()) == .fork("mallory/rocket"))
        #expect(CardWithholding.of(state, filter: DeliveryFilter()) == nil, "forks: true (the default) cards it")

        let own = RunScript(runID: 6, runNumber: 6, start: 1_700_000_500)
        harness.play(own.deliveries(waves: [[RunScript.Job("test")]]))
        #expect(Set(harness.sent.map(\.planned.run.runID)) == [6])
        #expect(!harness.session.widgetRequests.isEmpty)
        #expect(harness.violations.isEmpty)
    }

    @Test("filters.forks false: a run known only from its jobs waits for the delivery that says whose it is")
    func forksOffWaitsForTheOrigin() throws {
        var harness = BridgeHarness(filter: Self.forksOff())
        let own = RunScript(runID: 8, runNumber: 8)
        let events = own.deliveries(waves: [[RunScript.Job("test")]])
        // The jobs first: no workflow_run has said where the commit comes from.
        let jobs = events.filter { if case .workflowJob = $0 { true } else { false } }
        for event in jobs.prefix(2) { harness.feed(event) }
        #expect(harness.sent.isEmpty)
        harness.play(events.filter { if case .workflowRun = $0 { true } else { false } } + jobs.dropFirst(2))
        #expect(!harness.sent.isEmpty, "the repository's own run gets its card once that is known")
        #expect(harness.stored()?.state == "ended")
    }

    @Test("filters.forks is read from the configuration, true by default, and must be a boolean")
    func configuration() throws {
        func load(_ filters: String) throws -> BridgeConfiguration {
            try BridgeConfiguration(json: Data(("{\"filters\": " + filters + "}").utf8))
        }
        #expect(try load("{}").filter.forks)
        #expect(try !load(#"{"forks": false}"#).filter.forks)
        #expect(throws: ConfigurationError.self) { try load(#"{"forks": "no"}"#) }
    }
}
