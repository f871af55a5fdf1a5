import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// The review's fork scenario through the whole daemon: signed `pull_request` (and
/// `pull_request_target`) runs from `mallory/rocket` in the shape GitHub records them, on a
/// branch the fork named `main`, workflow "Deploy prod", against the fake PushWard and GitHub.
///
/// Each test ends with a run of the repository's own that does get what the fork's run did not
/// (a button, a review, the widget, "fixed"): once that arrived, everything the fork's run could
/// have caused before it had been sent too, so the absence is not a race.
@Suite("Forks end to end", .serialized, .timeLimit(.minutes(3)))
struct ForkEndToEndTests {
    typealias Bridge = ActionEndToEndTests.Bridge
    static let rules =
        #""rules": [{"offer": ["cancel", "approve", "rerun"], "workflows": ["Deploy*"], "branches": ["main"], "approvers": ["mona"]}]"#
    static let widget = #""widgets": [{"slug": "ci-main", "name": "CI on main", "branches": ["main"]}],"#
    static let waves: [[RunScript.Job]] = [[RunScript.Job("deploy", duration: 20)]]
    static let failing: [[RunScript.Job]] = [[RunScript.Job("deploy", duration: 20, conclusion: "failure")]]

    /// The fork's run: recorded-shape run bodies, then its jobs (which carry no head repository).
    static func deliverFork(
        _ payload: ForkRunPayload, to bridge: Bridge, waiting: Bool, conclusion: String?
    ) async throws {
        let jobs = payload.jobs
        let id = payload.runID * 100
        #expect(await bridge.github.deliver(event: "workflow_run", body: try payload.body("requested")) == 202)
        #expect(await bridge.github.deliver(event: "workflow_run", body: try payload.body("in_progress", at: 1)) == 202)
        var events = [jobs.job(id, "deploy", "queued", createdAt: 2)]
        if waiting { events.append(jobs.job(id, "deploy", "waiting", createdAt: 2, environment: "production")) }
        if let conclusion {
            events.append(
                jobs.job(
                    id, "deploy", "completed", createdAt: 2, startedAt: 3, completedAt: 25, conclusion: conclusion))
        }
        await bridge.deliver(events)
        if let conclusion {
            #expect(
                await bridge.github.deliver(
                    event: "workflow_run", body: try payload.body("completed", at: 26, conclusion: conclusion)) == 202)
        }
    }

    static func script(_ runID: Int, ago: Double) -> RunScript {
        var script = ActionEndToEndTests.script(runID, ago: ago)
        script.workflow = "Deploy prod"
        return script
    }

    static func sentences(_ bridge: Bridge, runID: Int) throws -> [String] {
        let database = try BridgeDatabase(path: bridge.databasePath, readOnly: true)
        let stored = try #require(try database.storedRun(RunKey(repository: "acme/widgets", runID: runID, attempt: 1)))
        return RunExplanation.sentences(
            RunExplanation.Facts(
                run: stored, session: nil, acknowledged: nil, requests: [], deliveries: [], settings: ActivitySettings()
            ))
    }

    @Test(
        "a waiting Deploy prod from mallory/rocket on main: no Approve/Reject, no Cancel, no widget; its card says whose",
        arguments: ["pull_request", "pull_request_target"])
    func waitingForkRun(event: String) async throws {
        let bridge = try Bridge(actions: Self.rules, topLevel: #""alerts": {},"# + Self.widget)
        bridge.github.setPendingDeployments(repository: "acme/widgets", runID: 1, [.init(id: 11, name: "production")])
        bridge.github.setPendingDeployments(repository: "acme/widgets", runID: 2, [.init(id: 22, name: "production")])
        var fork = ForkRunPayload(runID: 1, start: Date().timeIntervalSince1970 - 600)
        fork.event = event
        try await Self.deliverFork(fork, to: bridge, waiting: true, conclusion: nil)
        #expect(
            await ActionEndToEndTests.eventually {
                bridge.card?.content["subtitle"]?.stringValue?.contains("from mallory/rocket") == true
            })
        #expect(bridge.cardButton == nil, "no Cancel on the fork's card")
        #expect(bridge.pushward.widgets["ci-main"] == nil)

        // The repository's own waiting run on main gets all of it, the review after the fork's.
        await bridge.deliver(ActionEndToEndTests.waiting(Self.script(2, ago: 300), environment: "production"))
        #expect(await ActionEndToEndTests.eventually { bridge.pushward.acceptedNotifications.count >= 1 })
        #expect(await ActionEndToEndTests.eventually { bridge.pushward.widgets["ci-main"] != nil })
        #expect(await ActionEndToEndTests.eventually { bridge.cardButton?.title == "Cancel" })
        let notifications = bridge.pushward.acceptedNotifications
        #expect(notifications.count == 1, "only the repository's run asks for a review: \(notifications.map(\.body))")
        let review = try #require(notifications.first?.body)
        #expect(review["actions"]?.arrayValue?.map { $0["id"] } == ["approve", "reject"])
        #expect(review["body"]?.stringValue?.contains("mallory") == false)
        // Nothing the fake PushWard was sent for the widget is about the fork's run.
        let widgetBodies = bridge.pushward.requests.filter { $0.path.hasPrefix("/widgets") }.map(\.body)
        #expect(!widgetBodies.isEmpty)
        #expect(widgetBodies.allSatisfy { !($0?.canonicalString.contains("mallory") ?? false) })
        #expect(try bridge.actions(runID: 1).isEmpty, "no token was ever minted for the fork's run")
        #expect(bridge.github.actions.isEmpty)
        let explained = try Self.sentences(bridge, runID: 1)
        #expect(explained.first?.contains("(Deploy prod on main from mallory/rocket)") == true, "\(explained)")
        #expect(explained.contains { $0.contains("gets no button that acts on GitHub") })
        let database = try BridgeDatabase(path: bridge.databasePath, readOnly: true)
        let documents = try #require(try RunDocument.json(database: database, runID: 1)?.arrayValue)
        #expect(documents.first?["fork"] == "mallory/rocket", "runs show --json names the fork")
        let own = try #require(try RunDocument.json(database: database, runID: 2)?.arrayValue)
        #expect(own.first?["fork"] == .null, "the repository's own run is no fork")
        #expect(bridge.pushward.violations.isEmpty, "\(bridge.pushward.violations)")
        await bridge.daemon.shutdown()
    }

    @Test("a real main failure, then a same-named fork success: no 'CI fixed' on main, the failure alert stays")
    func noFixedFromAFork() async throws {
        let bridge = try Bridge(actions: Self.rules, topLevel: #""alerts": {},"#)
        await bridge.deliver(Self.script(1, ago: 1_800).deliveries(waves: Self.failing))
        #expect(await ActionEndToEndTests.eventually { bridge.pushward.acceptedNotifications.count == 1 })
        let failure = try #require(bridge.pushward.acceptedNotifications.first?.body)
        #expect(failure["title"] == "acme/widgets · Deploy prod failed")

        try await Self.deliverFork(
            ForkRunPayload(runID: 2, start: Date().timeIntervalSince1970 - 1_200), to: bridge, waiting: false,
            conclusion: "success")
        // The repository's own success then fixes its own failure, under the same collapse_id.
        await bridge.deliver(Self.script(3, ago: 600).deliveries(waves: Self.waves))
        #expect(await ActionEndToEndTests.eventually { bridge.pushward.acceptedNotifications.count >= 2 })
        try await Task.sleep(for: .milliseconds(300))
        let bodies = bridge.pushward.acceptedNotifications.map(\.body)
        #expect(bodies.count == 2, "\(bodies)")
        #expect(bodies.last?["title"] == "acme/widgets · Deploy prod fixed")
        #expect(bodies.last?["url"]?.stringValue?.hasSuffix("/actions/runs/3") == true, "the repository's run fixed it")
        #expect(bodies.last?["collapse_id"] == failure["collapse_id"])
        #expect(bodies.allSatisfy { !($0["body"]?.stringValue?.contains("mallory") ?? true) })
        #expect(bridge.pushward.violations.isEmpty, "\(bridge.pushward.violations)")
        await bridge.daemon.shutdown()
    }

    @Test("with forks: true a fork's failure alerts, says from mallory/rocket, and replaces nothing of main's")
    func optedInForkAlert() async throws {
        let bridge = try Bridge(
            actions: Self.rules,
            topLevel: #""alerts": {"rules": [{"when": ["failure", "fixed"], "branches": ["main"], "forks": true}]},"#)
        await bridge.deliver(Self.script(1, ago: 1_800).deliveries(waves: Self.failing))
        #expect(await ActionEndToEndTests.eventually { bridge.pushward.acceptedNotifications.count == 1 })
        let failure = try #require(bridge.pushward.acceptedNotifications.first?.body)
        #expect(failure["actions"]?.arrayValue?.map { $0["id"] } == ["rerun"], "the repository's failure: a re-run")

        try await Self.deliverFork(
            ForkRunPayload(runID: 2, start: Date().timeIntervalSince1970 - 1_200), to: bridge, waiting: false,
            conclusion: "failure")
        #expect(await ActionEndToEndTests.eventually { bridge.pushward.acceptedNotifications.count == 2 })
        let forkAlert = try #require(bridge.pushward.acceptedNotifications.last?.body)
        #expect(forkAlert["body"]?.stringValue?.contains("on main from mallory/rocket") == true)
        #expect(forkAlert["collapse_id"] != failure["collapse_id"])
        #expect(forkAlert["actions"] == nil, "no re-run button for a fork's failure")
        #expect(try bridge.actions(runID: 2).isEmpty)
        #expect(bridge.pushward.violations.isEmpty, "\(bridge.pushward.violations)")
        await bridge.daemon.shutdown()
    }
}
