import Foundation
import Testing

@testable import BridgeCore

/// Parses `json` and returns the error it throws, or nil when it parses.
private func configurationError(_ json: String) -> ConfigurationError? {
    do throws(ConfigurationError) {
        _ = try BridgeConfiguration(json: Data(json.utf8))
        return nil
    } catch {
        return error
    }
}

@Suite("Configuration file")
struct BridgeConfigurationTests {
    /// Every key the parser reads, each set away from its default.
    static let fullDocument = #"""
        {
          "_comment": "every key",
          "listen": "0.0.0.0:8443",
          "admin_listen": "127.0.0.1:9999",
          "database": "/var/lib/pushward-bridge/state.sqlite",
          "github": {
            "_comment": "rotation",
            "webhook_secrets": ["new-secret", "old-secret"],
            "max_body_bytes": 1048576,
            "payload_retention": "1d",
            "request_deadline": "2m",
            "max_connections_per_address": 256
          },
          "pushward": {
            "url": "http://localhost:8787",
            "api_key": "pk_test_123",
            "priority": 7,
            "ended_ttl": "1h",
            "stale_ttl": 7200,
            "end_delay": "10s",
            "end_display_time": "3s",
            "min_update_interval": "2s",
            "requests_per_minute": 90,
            "rate_window": "30s"
          },
          "activity": {
            "scope": "workflow",
            "template": "generic",
            "icon": "hammer",
            "step_colors": false,
            "completion_grace": "1h30m"
          },
          "filters": {
            "_comment": "globs",
            "repositories": { "include": ["acme/*"], "exclude": ["acme/secret"] },
            "workflows": { "include": ["CI", "Deploy *"] },
            "branches": { "exclude": ["dependabot/*"] },
            "events": { "include": ["push", "pull_request"], "exclude": [], "_note": "comment in a rule" }
          }
        }
        """#

    @Test("a document with every key gives exactly those values")
    func fullDocumentValues() throws {
        let configuration = try BridgeConfiguration(json: Data(Self.fullDocument.utf8))

        var expected = BridgeConfiguration()
        expected.listen = "0.0.0.0:8443"
        expected.adminListen = "127.0.0.1:9999"
        expected.database = "/var/lib/pushward-bridge/state.sqlite"
        expected.webhookSecrets = ["new-secret", "old-secret"]
        expected.maxBodyBytes = 1_048_576
        expected.payloadRetention = 86_400
        expected.requestDeadline = 120
        expected.maxConnectionsPerAddress = 256
        expected.pushwardURL = "http://localhost:8787"
        expected.apiKey = "pk_test_123"
        expected.activity.priority = 7
        expected.activity.endedTTL = 3_600
        expected.activity.staleTTL = 7_200
        expected.activity.endDelay = 10
        expected.activity.endDisplayTime = 3
        expected.pacing = RequestPacer.Settings(limit: 90, window: 30)
        expected.activity.minUpdateInterval = 2
        expected.activity.scope = .workflow
        expected.activity.template = .generic
        expected.activity.icon = "hammer"
        expected.activity.stepColors = false
        expected.activity.completionGrace = 5_400
        expected.filter.repositories = .init(include: [GlobPattern("acme/*")], exclude: [GlobPattern("acme/secret")])
        expected.filter.workflows = .init(include: [GlobPattern("CI"), GlobPattern("Deploy *")])
        expected.filter.branches = .init(exclude: [GlobPattern("dependabot/*")])
        expected.filter.events = .init(include: [GlobPattern("push"), GlobPattern("pull_request")])
        #expect(configuration == expected)

        // Field by field too, so a failure says which key went wrong.
        #expect(configuration.listen == "0.0.0.0:8443")
        #expect(configuration.adminListen == "127.0.0.1:9999")
        #expect(configuration.database == "/var/lib/pushward-bridge/state.sqlite")
        #expect(configuration.webhookSecrets == ["new-secret", "old-secret"])
        #expect(configuration.maxBodyBytes == 1_048_576)
        #expect(configuration.payloadRetention == 86_400)
        #expect(configuration.pushwardURL == "http://localhost:8787")
        #expect(configuration.apiKey == "pk_test_123")
        #expect(configuration.activity.priority == 7)
        #expect(configuration.activity.endedTTL == 3_600)
        #expect(configuration.activity.staleTTL == 7_200)
        #expect(configuration.activity.endDelay == 10)
        #expect(configuration.activity.endDisplayTime == 3)
        #expect(configuration.activity.minUpdateInterval == 2)
        #expect(configuration.activity.scope == .workflow)
        #expect(configuration.activity.template == .generic)
        #expect(configuration.activity.icon == "hammer")
        #expect(configuration.activity.stepColors == false)
        #expect(configuration.activity.completionGrace == 5_400)
        #expect(configuration.filter.repositories.include.map(\.pattern) == ["acme/*"])
        #expect(configuration.filter.repositories.exclude.map(\.pattern) == ["acme/secret"])
        #expect(configuration.filter.workflows.include.map(\.pattern) == ["CI", "Deploy *"])
        #expect(configuration.filter.workflows.exclude.isEmpty)
        #expect(configuration.filter.branches.include.isEmpty)
        #expect(configuration.filter.branches.exclude.map(\.pattern) == ["dependabot/*"])
        #expect(configuration.filter.events.include.map(\.pattern) == ["push", "pull_request"])
        #expect(configuration.filter.events.exclude.isEmpty)
    }

    @Test("the parsed filters act on deliveries")
    func parsedFiltersApply() throws {
        let filter = try BridgeConfiguration(json: Data(Self.fullDocument.utf8)).filter
        #expect(filter.rejection(repository: "acme/app", workflow: "CI", branch: "main", event: "push") == nil)
        #expect(filter.rejection(repository: "acme/app", workflow: "Deploy prod", branch: nil, event: nil) == nil)
        #expect(
            filter.rejection(repository: "acme/secret", workflow: "CI", branch: "main", event: "push")
                == "repository acme/secret matches exclude pattern acme/secret")
        #expect(
            filter.rejection(repository: "acme/app", workflow: "Lint", branch: "main", event: "push")
                == "workflow Lint matches no include pattern")
        #expect(
            filter.rejection(repository: "acme/app", workflow: "CI", branch: "dependabot/npm/x", event: "push")
                == "branch dependabot/npm/x matches exclude pattern dependabot/*")
        #expect(
            filter.rejection(repository: "acme/app", workflow: "CI", branch: "main", event: "schedule")
                == "event schedule matches no include pattern")
    }

    @Test("an empty object gives every default")
    func emptyDocumentGivesDefaults() throws {
        let configuration = try BridgeConfiguration(json: Data("{}".utf8))
        #expect(configuration == BridgeConfiguration())
        #expect(configuration.listen == "127.0.0.1:8080")
        #expect(configuration.adminListen == "127.0.0.1:9090")
        #expect(configuration.database == "var/pushward-bridge.sqlite")
        #expect(configuration.webhookSecrets.isEmpty)
        #expect(configuration.maxBodyBytes == 25 * 1024 * 1024)
        #expect(configuration.payloadRetention == 3 * 86_400)
        #expect(configuration.requestDeadline == 30)
        #expect(configuration.pushwardURL == "https://api.pushward.app")
        #expect(configuration.apiKey == nil)
        #expect(configuration.activity.scope == .repository)
        #expect(configuration.activity.icon == "arrow.triangle.branch")
        #expect(configuration.activity.stepColors == true)
        #expect(configuration.activity.priority == 1)
        #expect(configuration.activity.endedTTL == 900)
        #expect(configuration.activity.staleTTL == 1_800)
        #expect(configuration.activity.endDelay == 5)
        #expect(configuration.activity.endDisplayTime == 4)
        #expect(configuration.activity.minUpdateInterval == 1)
        #expect(configuration.activity.completionGrace == 120)
        #expect(configuration.filter == DeliveryFilter())
    }

    @Test("empty sections, null values and an empty api_key leave the defaults")
    func emptySectionsAndNullsGiveDefaults() throws {
        let json = #"""
            {"listen": null, "github": {}, "pushward": {"api_key": "", "priority": null},
             "activity": {"scope": null}, "filters": {"branches": {}}}
            """#
        let configuration = try BridgeConfiguration(json: Data(json.utf8))
        #expect(configuration == BridgeConfiguration())
        #expect(configuration.apiKey == nil)
    }

    @Test("a section that sets some keys keeps the defaults of the others")
    func partialSectionKeepsOtherDefaults() throws {
        let configuration = try BridgeConfiguration(json: Data(#"{"pushward": {"priority": 0}}"#.utf8))
        #expect(configuration.activity.priority == 0)
        #expect(configuration.activity.slotsPerPerson == 5, "PushWard's limit by default")
        let fewer = try BridgeConfiguration(json: Data(#"{"pushward": {"slots_per_person": 3}}"#.utf8))
        #expect(fewer.activity.slotsPerPerson == 3)
        #expect(configuration.activity.endedTTL == 900)
        #expect(configuration.pushwardURL == "https://api.pushward.app")
        #expect(configuration.listen == "127.0.0.1:8080")
    }

    @Test("config.example.json parses, and matches the defaults but for its dependabot branch filter")
    func exampleFileParses() throws {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("config.example.json"))
        let configuration = try BridgeConfiguration(json: data)
        var expected = BridgeConfiguration()
        expected.webhookSecrets = ["change-me-to-the-secret-of-your-github-webhook"]
        expected.filter.branches.exclude = [GlobPattern("dependabot/*")]
        #expect(configuration == expected)
    }

    // MARK: - Unknown keys

    @Test(
        "an unknown key is an error naming its dotted path",
        arguments: [
            (#"{"listn": "127.0.0.1:1"}"#, "listn"),
            (#"{"github": {"webhook_secret": ["x"]}}"#, "github.webhook_secret"),
            (#"{"pushward": {"endedttl": "5m"}}"#, "pushward.endedttl"),
            (#"{"activity": {"colour": "red"}}"#, "activity.colour"),
            (#"{"filters": {"branch": {}}}"#, "filters.branch"),
            (#"{"filters": {"branches": {"includes": ["main"]}}}"#, "filters.branches.includes"),
            (#"{"filters": {"events": {"include": [], "only": []}}}"#, "filters.events.only"),
            // Several: the first in sorted order, so the message is stable.
            (#"{"zeta": 1, "alpha": 2, "listen": "x"}"#, "alpha"),
        ])
    func unknownKeyIsNamed(json: String, key: String) throws {
        let error = try #require(configurationError(json))
        #expect(error.key == key)
        #expect(error.problem == "unknown key")
        #expect(error.description == "\(key): unknown key")
    }

    @Test("keys starting with _ are comments, at the top level and in every section")
    func underscoreKeysAreComments() throws {
        let json = #"""
            {"_": 1, "_comment": {"anything": [true]},
             "github": {"_c": null}, "pushward": {"_c": 5}, "activity": {"_c": "x"},
             "filters": {"_c": [], "workflows": {"_c": "x", "include": ["CI"]}}}
            """#
        let configuration = try BridgeConfiguration(json: Data(json.utf8))
        var expected = BridgeConfiguration()
        expected.filter.workflows.include = [GlobPattern("CI")]
        #expect(configuration == expected)
    }

    // MARK: - Wrong types and out-of-range values

    @Test(
        "a wrong type or an out-of-range value is an error naming the key",
        arguments: [
            // Types.
            (#"{"listen": 8080}"#, "listen"),
            (#"{"admin_listen": true}"#, "admin_listen"),
            (#"{"database": ["a"]}"#, "database"),
            (#"{"github": "yes"}"#, "github"),
            (#"{"github": {"webhook_secrets": "only-one"}}"#, "github.webhook_secrets"),
            (#"{"github": {"webhook_secrets": ["ok", 2]}}"#, "github.webhook_secrets"),
            (#"{"github": {"max_body_bytes": "25MB"}}"#, "github.max_body_bytes"),
            (#"{"pushward": []}"#, "pushward"),
            (#"{"pushward": {"url": 1}}"#, "pushward.url"),
            (#"{"pushward": {"api_key": 123}}"#, "pushward.api_key"),
            (#"{"pushward": {"priority": "5"}}"#, "pushward.priority"),
            (#"{"pushward": {"priority": 1.5}}"#, "pushward.priority"),
            (#"{"pushward": {"end_delay": 1.5}}"#, "pushward.end_delay"),
            (#"{"pushward": {"min_update_interval": true}}"#, "pushward.min_update_interval"),
            (#"{"activity": {"step_colors": "yes"}}"#, "activity.step_colors"),
            (#"{"activity": {"icon": 3}}"#, "activity.icon"),
            (#"{"activity": {"scope": 1}}"#, "activity.scope"),
            (#"{"activity": {"template": "countdown"}}"#, "activity.template"),
            (#"{"activity": {"template": true}}"#, "activity.template"),
            (#"{"filters": {"workflows": ["CI"]}}"#, "filters.workflows"),
            (#"{"filters": {"repositories": {"include": "acme/*"}}}"#, "filters.repositories.include"),
            (#"{"filters": {"events": {"exclude": [null]}}}"#, "filters.events.exclude"),
            // Values.
            (#"{"pushward": {"priority": 11}}"#, "pushward.priority"),
            (#"{"pushward": {"priority": -1}}"#, "pushward.priority"),
            (#"{"pushward": {"slots_per_person": 0}}"#, "pushward.slots_per_person"),
            (#"{"pushward": {"slots_per_person": 6}}"#, "pushward.slots_per_person"),
            (#"{"pushward": {"ended_ttl": 0}}"#, "pushward.ended_ttl"),
            (#"{"pushward": {"ended_ttl": "0s"}}"#, "pushward.ended_ttl"),
            (#"{"pushward": {"stale_ttl": "31d"}}"#, "pushward.stale_ttl"),
            (#"{"pushward": {"end_display_time": "5x"}}"#, "pushward.end_display_time"),
            (#"{"pushward": {"end_delay": -1}}"#, "pushward.end_delay"),
            (#"{"pushward": {"url": "ftp://x"}}"#, "pushward.url"),
            (#"{"pushward": {"url": "api.pushward.app"}}"#, "pushward.url"),
            // The API key goes with every request: never over plain HTTP across a network.
            (#"{"pushward": {"url": "http://api.pushward.app"}}"#, "pushward.url"),
            (#"{"pushward": {"url": "http://10.0.0.5:8787"}}"#, "pushward.url"),
            (#"{"pushward": {"url": "http://127.0.0.1.example.com"}}"#, "pushward.url"),
            (#"{"admin_hosts": "bridge.internal"}"#, "admin_hosts"),
            (#"{"admin_hosts": [""]}"#, "admin_hosts"),
            (#"{"admin_hosts": ["a b"]}"#, "admin_hosts"),
            (#"{"github": {"max_unverified_body_bytes": 0}}"#, "github.max_unverified_body_bytes"),
            (#"{"github": {"max_body_bytes": 0}}"#, "github.max_body_bytes"),
            (#"{"github": {"request_deadline": 0}}"#, "github.request_deadline"),
            (#"{"github": {"max_connections_per_address": 513}}"#, "github.max_connections_per_address"),
            (#"{"github": {"max_connections_per_address": -1}}"#, "github.max_connections_per_address"),
            (#"{"github": {"request_deadline": "2h"}}"#, "github.request_deadline"),
            (#"{"github": {"request_deadline": "soon\u202E"}}"#, "github.request_deadline"),
            (#"{"github": {"payload_retention": "1.5h"}}"#, "github.payload_retention"),
            (#"{"github": {"payload_retention": "400d"}}"#, "github.payload_retention"),
            (#"{"activity": {"scope": "org"}}"#, "activity.scope"),
            (#"{"activity": {"completion_grace": "two minutes"}}"#, "activity.completion_grace"),
        ])
    func badValueIsNamed(json: String, key: String) throws {
        let error = try #require(configurationError(json), "\(json) should be rejected")
        #expect(error.key == key)
        #expect(error.problem != "unknown key")
        #expect(error.description.hasPrefix("\(key): "))
    }

    @Test("the problem says what is expected")
    func problemsExplain() throws {
        let priority = try #require(configurationError(#"{"pushward": {"priority": 11}}"#))
        #expect(priority.problem == "must be a whole number from 0 to 10")
        let ttl = try #require(configurationError(#"{"pushward": {"ended_ttl": 0}}"#))
        #expect(ttl.problem.contains("from 1 to 2592000 seconds"))
        let scope = try #require(configurationError(#"{"activity": {"scope": "org"}}"#))
        #expect(scope.problem == #"must be "repository" or "workflow""#)
        let url = try #require(configurationError(#"{"pushward": {"url": "ftp://x"}}"#))
        #expect(url.problem == "must be an absolute https:// URL such as https://api.pushward.app")
        let plain = try #require(configurationError(#"{"pushward": {"url": "http://api.pushward.app"}}"#))
        #expect(plain.problem.contains("must be https://"))
    }

    @Test("pushward.url over plain http is accepted to loopback hosts only; admin_hosts are lowercased")
    func loopbackHTTPAndAdminHosts() throws {
        for url in ["http://127.0.0.1:8787", "http://localhost:8787/", "http://[::1]:8787", "HTTPS://api.pushward.app"]
        {
            let json = #"{"pushward": {"url": "\#(url)"}, "admin_hosts": ["Bridge.Internal", "10.0.0.5"]}"#
            let configuration = try BridgeConfiguration(json: Data(json.utf8))
            #expect(configuration.pushwardURL == url)
            #expect(configuration.adminHosts == ["bridge.internal", "10.0.0.5"])
        }
        #expect(BridgeConfiguration().maxUnverifiedBodyBytes == 64 * 1024 * 1024)
    }

    @Test("range limits are inclusive")
    func rangeBoundsAreInclusive() throws {
        let json = #"""
            {"pushward": {"priority": 10, "ended_ttl": 1, "stale_ttl": "30d", "end_delay": 0},
             "github": {"max_body_bytes": 1073741824, "payload_retention": "365d"}}
            """#
        let configuration = try BridgeConfiguration(json: Data(json.utf8))
        #expect(configuration.activity.priority == 10)
        #expect(configuration.activity.endedTTL == 1)
        #expect(configuration.activity.staleTTL == 2_592_000)
        #expect(configuration.activity.endDelay == 0)
        #expect(configuration.maxBodyBytes == 1 << 30)
        #expect(configuration.payloadRetention == 31_536_000)
        #expect(configurationError(#"{"github": {"max_body_bytes": 1073741825}}"#)?.key == "github.max_body_bytes")
        #expect(configurationError(#"{"github": {"payload_retention": "366d"}}"#)?.key == "github.payload_retention")
    }

    // MARK: - The document as a whole

    @Test(
        "a document that is not a JSON object is an error about the file",
        arguments: ["", "not json", "{\"listen\": ", "[]", #"[{"listen": "x"}]"#, "null", "42", #""text""#])
    func notAnObject(json: String) throws {
        let error = try #require(configurationError(json), "\(json.debugDescription) should be rejected")
        #expect(error.key == "(file)")
    }

    @Test("not JSON and a JSON array give different problems")
    func wholeDocumentProblems() throws {
        #expect(configurationError("{oops")?.problem == "not valid JSON")
        #expect(configurationError("[1, 2]")?.problem == "the configuration must be a JSON object")
    }
}

@Suite("Duration text")
struct DurationTextTests {
    @Test(
        "durations in units and whole seconds",
        arguments: [
            ("90s", 90), ("15m", 900), ("1h30m", 5_400), ("3d", 259_200), ("0", 0), ("0s", 0), ("42", 42),
            ("1d2h3m4s", 93_784), ("2h", 7_200), ("120s", 120), ("30m30m", 3_600),
        ])
    func parses(text: String, seconds: Int) {
        #expect(DurationText.seconds(text) == seconds)
    }

    @Test(
        "anything else is not a duration",
        arguments: [
            "", "m", "5x", "1.5h", "-3", "-3s", "h5", "5m3", " 5s", "5s ", "5 s", "5S", "1w",
            "99999999999999999999s", "9999999999999999d",
        ])
    func rejects(text: String) {
        #expect(DurationText.seconds(text) == nil, "\(text.debugDescription) should not parse")
    }

    @Test("a sum past Int.max is not a duration (and does not trap)")
    func overflowingSumIsRejected() {
        #expect(DurationText.seconds("9223372036854775807s1s") == nil)
        #expect(DurationText.seconds("100000000000000d100000000000000d") == nil)
    }
}

@Suite("Glob patterns")
struct GlobPatternTests {
    @Test(
        "matching",
        arguments: [
            // `*` alone matches anything, slashes and the empty string included.
            ("*", "", true), ("*", "acme/app", true), ("**", "x/y/z", true),
            // Prefix.
            ("acme/*", "acme/app", true), ("acme/*", "acme/", true), ("acme/*", "acme/a/b", true),
            ("acme/*", "acme", false), ("acme/*", "other/acme/app", false), ("acme/*", "Acme/app", false),
            // Suffix.
            ("*-bot", "renovate-bot", true), ("*-bot", "-bot", true), ("*-bot", "bot", false),
            ("*-bot", "renovate-bot2", false),
            // Several stars, in order, without overlapping.
            ("a*b*c", "abc", true), ("a*b*c", "aXXbYYc", true), ("a*b*c", "a/b/c", true),
            ("a*b*c", "acb", false), ("a*b*c", "abcX", false), ("a*b*c", "abcbc", true),
            ("ab*bc", "abc", false), ("ab*bc", "abbc", true), ("*a*a", "a", false), ("*a*a", "aa", true),
            // No star: exact and case-sensitive.
            ("main", "main", true), ("main", "Main", false), ("main", "main2", false), ("main", "", false),
            ("release/1.0", "release/1.0", true), ("release/1.0", "release/1x0", false),
        ])
    func matches(pattern: String, text: String, expected: Bool) {
        #expect(GlobPattern(pattern).matches(text) == expected, "\(pattern) ~ \(text)")
    }

    @Test("describes itself as the pattern")
    func description() {
        #expect(GlobPattern("acme/*").description == "acme/*")
        #expect("\(GlobPattern("*-bot"))" == "*-bot")
    }
}

@Suite("Delivery filter")
struct DeliveryFilterTests {
    @Test("an empty filter lets everything in")
    func emptyFilterPassesAll() {
        let filter = DeliveryFilter()
        #expect(filter.rejection(repository: "acme/app", workflow: "CI", branch: "main", event: "push") == nil)
        #expect(filter.rejection(repository: "x/y", workflow: nil, branch: nil, event: nil) == nil)
    }

    @Test("exclude wins over include")
    func excludeWinsOverInclude() {
        var filter = DeliveryFilter()
        filter.repositories = .init(include: [GlobPattern("acme/*")], exclude: [GlobPattern("acme/secret*")])
        #expect(filter.rejection(repository: "acme/app", workflow: nil, branch: nil, event: nil) == nil)
        #expect(
            filter.rejection(repository: "acme/secret-sauce", workflow: nil, branch: nil, event: nil)
                == "repository acme/secret-sauce matches exclude pattern acme/secret*")
        #expect(
            filter.rejection(repository: "other/app", workflow: nil, branch: nil, event: nil)
                == "repository other/app matches no include pattern")
    }

    @Test("exclude alone rejects only what it matches, naming the first matching pattern")
    func excludeAlone() {
        var filter = DeliveryFilter()
        filter.branches = .init(exclude: [GlobPattern("gh-pages"), GlobPattern("dependabot/*"), GlobPattern("*")])
        #expect(
            filter.rejection(repository: "a/b", workflow: nil, branch: "dependabot/npm", event: nil)
                == "branch dependabot/npm matches exclude pattern dependabot/*")
        filter.branches.exclude.removeLast()
        #expect(filter.rejection(repository: "a/b", workflow: nil, branch: "main", event: nil) == nil)
    }

    @Test("any include pattern lets a value in")
    func anyIncludeMatches() {
        var filter = DeliveryFilter()
        filter.events = .init(include: [GlobPattern("push"), GlobPattern("pull_request*")])
        #expect(filter.rejection(repository: "a/b", workflow: nil, branch: nil, event: "push") == nil)
        #expect(filter.rejection(repository: "a/b", workflow: nil, branch: nil, event: "pull_request_target") == nil)
        #expect(
            filter.rejection(repository: "a/b", workflow: nil, branch: nil, event: "schedule")
                == "event schedule matches no include pattern")
    }

    @Test("a value the payload does not carry passes, even against include lists")
    func nilValuesPass() {
        var filter = DeliveryFilter()
        filter.workflows = .init(include: [GlobPattern("CI")], exclude: [GlobPattern("*")])
        filter.branches = .init(include: [GlobPattern("main")])
        filter.events = .init(include: [GlobPattern("push")], exclude: [GlobPattern("*")])
        #expect(filter.rejection(repository: "a/b", workflow: nil, branch: nil, event: nil) == nil)
        // The same rules do reject values that are present.
        #expect(filter.rejection(repository: "a/b", workflow: "CI", branch: nil, event: nil) != nil)
        #expect(filter.rejection(repository: "a/b", workflow: nil, branch: "dev", event: nil) != nil)
        #expect(filter.rejection(repository: "a/b", workflow: nil, branch: nil, event: "push") != nil)
    }

    @Test("rules are checked repository, workflow, branch, event: the first reason is given")
    func firstReasonWins() {
        var filter = DeliveryFilter()
        filter.repositories = .init(include: [GlobPattern("acme/*")])
        filter.workflows = .init(include: [GlobPattern("CI")])
        filter.branches = .init(include: [GlobPattern("main")])
        filter.events = .init(include: [GlobPattern("push")])
        #expect(
            filter.rejection(repository: "x/y", workflow: "Z", branch: "dev", event: "schedule")
                == "repository x/y matches no include pattern")
        #expect(
            filter.rejection(repository: "acme/y", workflow: "Z", branch: "dev", event: "schedule")
                == "workflow Z matches no include pattern")
        #expect(
            filter.rejection(repository: "acme/y", workflow: "CI", branch: "dev", event: "schedule")
                == "branch dev matches no include pattern")
        #expect(
            filter.rejection(repository: "acme/y", workflow: "CI", branch: "main", event: "schedule")
                == "event schedule matches no include pattern")
        #expect(filter.rejection(repository: "acme/y", workflow: "CI", branch: "main", event: "push") == nil)
    }
}
