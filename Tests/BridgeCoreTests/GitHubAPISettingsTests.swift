import BridgeCore
import Foundation
import Testing

/// `github.api`: every key, each credential, the hook spellings, and the refusals that name the key.
@Suite("github.api settings")
struct GitHubAPISettingsTests {
    static func parse(_ api: String) throws(ConfigurationError) -> GitHubAPISettings? {
        try BridgeConfiguration(json: Data(#"{"github": {"api": \#(api)}}"#.utf8)).githubAPI
    }

    static func problem(_ api: String) -> ConfigurationError? {
        do {
            _ = try parse(api)
            return nil
        } catch {
            return error
        }
    }

    @Test("absent, nothing is configured; present and empty, the defaults and no credential")
    func absentAndDefaults() throws {
        #expect(try BridgeConfiguration(json: Data(#"{"github": {}}"#.utf8)).githubAPI == nil)
        let defaults = try #require(try Self.parse("{}"))
        #expect(defaults.url == "https://api.github.com")
        #expect(defaults.credential == nil && defaults.hooks.isEmpty)
        #expect(defaults.sweepInterval == 300 && defaults.staleAfter == 300)
        #expect(defaults.maxRedeliveriesPerMinute == 30)
    }

    @Test("every key of the issue's example, an App and three kinds of hook")
    func everyKey() throws {
        let settings = try #require(
            try Self.parse(
                """
                {"url": "https://ghe.example.com/api/v3", "app_id": 123, "private_key_file": "/path/key.pem",
                 "hooks": ["repos/acme/rocket/hooks/1", "orgs/acme/hooks/2", "app", "orgs/acme/hooks/2"],
                 "sweep_interval": "5m", "stale_after": "10m", "max_redeliveries_per_minute": 12}
                """))
        #expect(settings.url == "https://ghe.example.com/api/v3")
        #expect(settings.credential == .app(id: 123, privateKeyFile: "/path/key.pem"))
        #expect(
            settings.hooks == [.repository(owner: "acme", name: "rocket", id: 1), .organization("acme", id: 2), .app])
        #expect(settings.hooks.map(\.path) == ["/repos/acme/rocket/hooks/1", "/orgs/acme/hooks/2", "/app/hook"])
        #expect(settings.hooks.map(\.description) == ["repos/acme/rocket/hooks/1", "orgs/acme/hooks/2", "app"])
        #expect(settings.sweepInterval == 300 && settings.staleAfter == 600 && settings.maxRedeliveriesPerMinute == 12)
        #expect(try Self.parse(#"{"token": "github_pat_x"}"#)?.credential == .token("github_pat_x"))
    }

    @Test("hooks that are not one of the three spellings, or that could climb out of their path, are refused")
    func hookSpellings() {
        for bad in [
            "repos/acme/hooks/1", "repos/acme/rocket/hooks/x", "repos/acme/rocket/hooks/0", "orgs//hooks/2",
            "repos/../admin/hooks/1", "repos/acme/./hooks/1", "repos/acme/rocket%2F..%2F/hooks/1",
            "repos/acme/ro cket/hooks/1",
            "repos/acme/rоcket/hooks/1", "orgs/acme/hooks/2/deliveries", "apps", "/app", "",
        ] {
            #expect(GitHubAPISettings.Hook(bad) == nil, "\(bad)")
            let problem = Self.problem(#"{"token": "t", "hooks": [\#(JSONValue.string(bad).canonicalString)]}"#)
            #expect(problem?.key == "github.api.hooks[0]", "\(bad): \(String(describing: problem))")
        }
    }

    @Test("the App's own hook needs the App; a half App, two credentials and a non-https URL are refused")
    func refusals() {
        #expect(Self.problem(#"{"token": "t", "hooks": ["app"]}"#)?.problem.contains("App's JWT") == true)
        #expect(
            Self.problem(#"{"app_id": 1}"#)
                == ConfigurationError(
                    key: "github.api.private_key_file", problem: "a GitHub App needs both app_id and private_key_file"))
        #expect(Self.problem(#"{"private_key_file": "/k.pem"}"#)?.key == "github.api.app_id")
        #expect(Self.problem(#"{"token": "t", "app_id": 1, "private_key_file": "/k.pem"}"#)?.key == "github.api.token")
        #expect(Self.problem(#"{"url": "http://api.github.com"}"#)?.problem.contains("the token goes") == true)
        #expect(Self.problem(#"{"url": "http://127.0.0.1:8081"}"#) == nil)
        #expect(Self.problem(#"{"sweep_interval": "5s"}"#)?.key == "github.api.sweep_interval")
        #expect(Self.problem(#"{"max_redeliveries_per_minute": 0}"#)?.key == "github.api.max_redeliveries_per_minute")
        #expect(Self.problem(#"{"hook": []}"#) == ConfigurationError(key: "github.api.hook", problem: "unknown key"))
    }

    @Test("with github.api the completion guess waits for two rounds of lookups; without, it is as configured")
    func completionGraceWaitsForLookups() throws {
        let without = try BridgeConfiguration(json: Data(#"{"activity": {"completion_grace": "2m"}}"#.utf8))
        #expect(without.engineSettings.completionGrace == 120)
        let with = try BridgeConfiguration(
            json: Data(#"{"activity": {"completion_grace": "2m"}, "github": {"api": {"stale_after": "5m"}}}"#.utf8))
        #expect(with.engineSettings.completionGrace == 120 + 300 + 2 * 30)
        #expect(with.activity.completionGrace == 120, "the setting itself is what the file says")
        #expect(GitHubAPISettings.lookupInterval(10) == 5)
    }
}
