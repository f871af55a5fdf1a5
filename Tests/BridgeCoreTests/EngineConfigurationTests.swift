import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

/// The engine's configuration on its own: what it is made of, where a run goes, which buttons it
/// gets, and the one change after start (new filters), which leaves the rest as it was.
@Suite("engine configuration")
struct EngineConfigurationTests {
    typealias F = EngineFeatureFixtures

    @Test("the configuration file's sections reach the engine whole, with the grace the API lookups need")
    func fromConfigurationFile() throws {
        let configuration = try BridgeConfiguration(
            json: Data(
                #"""
                {"alerts": {"rules": [{"when": ["failure"]}]},
                 "routing": {"members": {"octocat": "usr_1"}},
                 "widgets": [{"slug": "ci-main", "name": "CI on main"}],
                 "filters": {"branches": {"exclude": ["dependabot/*"]}}}
                """#.utf8))
        let engine = configuration.engineConfiguration
        #expect(engine.alerts == configuration.alerts)
        #expect(engine.routing.members == ["octocat": "usr_1"])
        #expect(engine.widgets.map(\.slug) == ["ci-main"])
        #expect(
            engine.filter.rejection(repository: "acme/a", workflow: "CI", branch: "dependabot/x", event: nil) != nil)
        #expect(engine.settings == configuration.engineSettings)
        #expect(engine.actions == nil && !engine.notifies == !configuration.sendsNotifications)
    }

    @Test("new filters change the filters and nothing else")
    func replacingFilter() {
        var excluded = DeliveryFilter()
        excluded.branches = .init(exclude: [GlobPattern("wip/*")])
        var settings = ActivitySettings()
        settings.minUpdateInterval = 7
        let before = EngineConfiguration(
            settings: settings, alerts: AlertSettings(rules: [.onDefaultBranch]),
            routing: RoutingSettings(members: ["octocat": "usr_1"]), widgets: [WidgetSettings(slug: "w", name: "W")])
        let after = before.replacing(filter: excluded)
        #expect(before.filter.rejection(repository: "acme/a", workflow: nil, branch: "wip/1", event: nil) == nil)
        #expect(after.filter.rejection(repository: "acme/a", workflow: nil, branch: "wip/1", event: nil) != nil)
        #expect(after.settings == before.settings)
        #expect(after.alerts == before.alerts)
        #expect(after.routing.members == before.routing.members)
        #expect(after.widgets.map(\.slug) == ["w"])
    }

    @Test("without routing a run goes to everyone; with it, to the member its actor maps to")
    func routes() {
        let state = F.running(RunScript(runID: 1))
        #expect(EngineConfiguration().route(for: state) == .everyone)
        let routed = EngineConfiguration(routing: RoutingSettings(members: ["octocat": "usr_1"]))
        #expect(routed.route(for: state).person == "octocat")
    }

    @Test("buttons only with `actions`, only for the repository's own runs")
    func offers() {
        let actions = ActionSettings(publicURL: "https://hooks.example.com")
        var fork = RunScript(runID: 2)
        fork.headRepository = "mallory/widgets"
        let own = F.finished(RunScript(runID: 1), conclusion: "failure")
        let forked = F.finished(fork, conclusion: "failure")
        #expect(EngineConfiguration().offers(for: own).isEmpty)
        #expect(!EngineConfiguration(actions: actions).offers(for: own).isEmpty)
        #expect(EngineConfiguration(actions: actions).offers(for: forked).isEmpty)
        #expect(EngineConfiguration(actions: actions).notifies)
        #expect(!EngineConfiguration().notifies)
    }
}
