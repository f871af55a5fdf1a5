import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeDaemon

/// `EngineLoader` and `ServiceSettings`: the engine a service is built on carries the whole
/// configuration, from the store and fresh alike, and the capabilities follow the configuration.
@Suite("The engine as the configuration runs it")
struct EngineLoaderTests {
    static let key = "pw_live_loader_0123456789"

    /// Alerts, buttons, a widget, routing and an API key: everything the store does not carry.
    static func configured(key: String? = EngineLoaderTests.key) throws -> BridgeConfiguration {
        let apiKey = key.map { #""pushward": {"api_key": "\#($0)"},"# } ?? ""
        return try BridgeConfiguration(
            json: Data(
                #"""
                {\#(apiKey) "alerts": {},
                 "actions": {"public_url": "https://bridge.example.com"},
                 "github": {"webhook_secrets": ["loader-secret-0123456"],
                            "api": {"url": "http://127.0.0.1:1", "token": "ghp_loader"}},
                 "routing": {"members": {"octocat": "usr_1"}},
                 "widgets": [{"slug": "ci-main", "name": "CI on main", "branches": ["main"]}]}
                """#.utf8))
    }

    static func expectCarries(_ engine: BridgeEngine, _ configuration: BridgeConfiguration) {
        #expect(engine.alertSettings == configuration.alerts)
        #expect(engine.actionSettings == configuration.actions)
        #expect(engine.widgetSettings == configuration.widgets)
        #expect(engine.routing == configuration.routing)
        #expect(engine.settings == configuration.engineSettings)
        #expect(engine.keyFingerprint == configuration.apiKey.map(BridgeEngine.fingerprint(ofKey:)))
    }

    @Test("fresh and loaded, the engine carries the alert rules, the buttons, the widgets, the routing and the key")
    func carriesTheConfiguration() throws {
        let configuration = try Self.configured()
        #expect(configuration.actions != nil && !configuration.widgets.isEmpty && configuration.routing.isEnabled)
        let loader = EngineLoader(configuration: configuration)
        let fresh = loader.empty()
        Self.expectCarries(fresh, configuration)
        #expect(fresh.pacer == RequestPacer(settings: configuration.pacing), "a key sends: requests are paced")

        let directory = try ScratchDirectory()
        let database = try BridgeDatabase(path: directory.path("bridge.sqlite"))
        let loaded = try loader.load(from: database, at: 1_800_000_000)
        Self.expectCarries(loaded, configuration)
        #expect(loaded.pacer != nil)
    }

    @Test("without a key nothing is paced; a reload keeps the current window's pacer and the filters in force")
    func pacerAndFilter() throws {
        let directory = try ScratchDirectory()
        let database = try BridgeDatabase(path: directory.path("bridge.sqlite"))
        let dryRun = EngineLoader(configuration: try Self.configured(key: nil))
        #expect(dryRun.empty().pacer == nil)
        #expect(try dryRun.load(from: database, at: 0).pacer == nil)

        let loader = EngineLoader(configuration: try Self.configured())
        var pacer = RequestPacer(settings: .init(limit: 3, window: 60))
        _ = pacer.admit(.starting, at: 10)
        var filter = DeliveryFilter()
        filter.repositories = .init(exclude: [GlobPattern("acme/\u{202E}evil\u{0}")])
        let reloaded = try loader.load(from: database, filter: filter, pacer: pacer, at: 10)
        #expect(reloaded.pacer == pacer, "the requests of the window were sent all the same")
        #expect(reloaded.filter == filter)
    }

    @Test("a target refusal recorded for another key no longer holds, and is a change to write; for this key it stays")
    func refusalFollowsTheKey() throws {
        let directory = try ScratchDirectory()
        let database = try BridgeDatabase(path: directory.path("bridge.sqlite"))
        var before = BridgeEngine()
        before.useKey(fingerprint: BridgeEngine.fingerprint(ofKey: "pw_personal_key"))
        before.refuseTargets(at: 100)
        try database.write { try $0.save(before.rows(for: before.takeChanges(), at: 100), at: 100) }

        let personal = EngineLoader(configuration: try Self.configured(key: "pw_personal_key"))
        let kept = try personal.load(from: database, at: 200)
        #expect(kept.gate.targetsRefusedAt == 100, "the same key: still refused")
        #expect(!kept.changes.gate)

        let replaced = try EngineLoader(configuration: try Self.configured()).load(from: database, at: 200)
        #expect(replaced.gate.targetsRefusedAt == nil, "an organisation key: targets are tried again")
        #expect(replaced.changes.gate, "written with the next save")
    }

    @Test("the capabilities the dispatcher asks on every turn follow the configuration")
    func capabilities() throws {
        let none = ServiceSettings(configuration: BridgeConfiguration(), instance: "a")
        #expect(!none.sendsAlerts && !none.sendsButtons && !none.sendsWidgets && !none.pacesRequests)
        let all = ServiceSettings(configuration: try Self.configured(), instance: "b \u{202E}\u{1F600}")
        #expect(all.sendsAlerts && all.sendsButtons && all.sendsWidgets && all.pacesRequests)
        #expect(all.instance == "b \u{202E}\u{1F600}")
        var buttonsOnly = try Self.configured(key: nil)
        buttonsOnly.alerts = AlertSettings()
        buttonsOnly.widgets = []
        let settings = ServiceSettings(configuration: buttonsOnly, instance: "c")
        #expect(settings.sendsAlerts, "a button's refusal alerts, so buttons alone send alerts")
        #expect(settings.sendsButtons && !settings.sendsWidgets && !settings.pacesRequests)
    }
}
