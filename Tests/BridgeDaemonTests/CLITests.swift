import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The read-side CLI (`runs`, `deliveries`) against a database a replay filled, and
/// `check-config` / the configuration loader's environment and credential overrides.
@Suite("CLI against a replayed database", .timeLimit(.minutes(1)))
struct CLITests {
    static let runID = 6_454_805_877
    static let duplicated = "workflow_job.queued.attempt10-test.json"

    /// A database after a replay of attempt 10 (its card ended), one unsupported event, one
    /// malformed body and one redelivery. The directory holds it as long as the value lives.
    struct Replayed {
        var directory: ScratchDirectory
        var database: String
        var slug: String
        var acknowledged: JSONValue?
    }

    static func replay() async throws -> Replayed {
        let directory = try ScratchDirectory()
        let daemon = try await RunningDaemon.start(
            TestConfiguration(database: directory.path("bridge.sqlite")), directory: directory)
        do {
            for name in DaemonFixtures.attempt10 {
                let response = try await daemon.deliver(
                    event: DaemonFixtures.event(of: name), id: name, body: try DaemonFixtures.data(name))
                #expect(response.status == 202, "\(name)")
            }
            let ignored = try await daemon.deliver(
                event: "check_run", id: "ignored-check-run", body: try DaemonFixtures.data("check_run.completed.json"))
            #expect(ignored.status == 200)
            let rejected = try await daemon.deliver(
                event: "workflow_job", id: "rejected-garbage", body: Data("<html>not json</html>".utf8))
            #expect(rejected.status == 400)
            let duplicate = try await daemon.deliver(
                event: "workflow_job", id: duplicated, body: try DaemonFixtures.data(duplicated))
            #expect(duplicate.status == 200)

            let slug = try #require(try await daemon.read { try $0.listRuns().first?.slug })
            #expect(try await daemon.waitUntilEnded(slug: slug))
            let acknowledged = try await daemon.read { try $0.session(slug: slug)?.acknowledged }
            try await daemon.stop()
            return Replayed(
                directory: directory, database: daemon.databasePath, slug: slug, acknowledged: acknowledged)
        } catch {
            try? await daemon.stop()
            throw error
        }
    }

    private func run(_ arguments: [String], _ replayed: Replayed) async throws -> BridgeProcess.Result {
        let result = try await BridgeProcess.run(
            arguments + ["--database", replayed.database], in: replayed.directory)
        #expect(result.reason == .exit, "\(arguments) crashed: \(result.stderr)")
        return result
    }

    @Test("runs list and runs show describe the replayed run, its card and its pushes")
    func runs() async throws {
        let replayed = try await Self.replay()

        let list = try await run(["runs", "list", "--json"], replayed)
        #expect(list.status == 0, "\(list.stderr)")
        let runs = try #require(list.json?.arrayValue)
        #expect(runs.count == 1)
        let listed = try #require(runs.first)
        #expect(listed["repository"] == "foo/webhook-testing")
        #expect(listed["run_id"] == .number(Double(Self.runID)))
        #expect(listed["attempt"] == 10)
        #expect(listed["slug"] == .string(replayed.slug))
        #expect(listed["status"] == "completed")
        #expect(listed["conclusion"] == "success")
        #expect(listed["workflow"] == "Tests")
        #expect(listed["last_push_at"]?.doubleValue != nil)

        // What the card cost: every request of the replay was acknowledged (dry-run), each one update.
        let spent = try #require(listed["updates_spent"]?.intValue)
        #expect(spent > 0)

        let table = try await run(["runs", "list"], replayed)
        #expect(table.status == 0)
        #expect(table.stdout.contains(replayed.slug))
        #expect(table.stdout.contains(String(Self.runID)))
        // The UPDATES column of the run's row holds what it spent.
        let lines = table.stdout.split(separator: "\n").map(String.init)
        let header = try #require(lines.first)
        let row = try #require(lines.first { $0.hasPrefix(String(Self.runID)) })
        let column = header.distance(from: header.startIndex, to: try #require(header.range(of: "UPDATES")).lowerBound)
        #expect(String(row.dropFirst(column).prefix { $0 != " " }) == String(spent))

        let show = try await run(["runs", "show", String(Self.runID), "--json"], replayed)
        #expect(show.status == 0, "\(show.stderr)")
        let attempts = try #require(show.json?.arrayValue)
        #expect(attempts.count == 1)
        let shown = try #require(attempts.first)
        #expect(shown["attempt"] == 10)
        #expect(shown["updates_spent"]?.intValue == spent, "the list and the run agree on the cost")
        #expect(shown["slug"] == .string(replayed.slug))
        #expect(shown["phase"] == "ended")
        let jobs = try #require(shown["jobs"]?.arrayValue)
        #expect(Set(jobs.compactMap { $0["name"]?.stringValue }) == ["pre-commit", "test"])
        #expect(jobs.allSatisfy { $0["status"] == "completed" && $0["conclusion"] == "success" })
        let steps = try #require(shown["steps"]?.arrayValue)
        #expect(steps.compactMap { $0["name"]?.stringValue } == ["pre-commit", "test"])
        #expect(shown["desired"]?["content"]?["state"] == "Succeeded")
        #expect(shown["acknowledged"] != nil && shown["acknowledged"] == replayed.acknowledged)
        #expect(shown["acknowledged"]?["progress"] == 1)
        let pushes = try #require(shown["pushes"]?.arrayValue)
        let kinds = pushes.compactMap { $0["kind"]?.stringValue }
        #expect(kinds.first == "create")
        #expect(kinds.last == "end")
        #expect(pushes.last?["body"] == ["state": "ended"])
        let deliveries = try #require(shown["deliveries"]?.arrayValue)
        #expect(Set(deliveries.compactMap { $0["id"]?.stringValue }) == Set(DaemonFixtures.attempt10))

        let text = try await run(["runs", "show", String(Self.runID)], replayed)
        #expect(text.status == 0)
        #expect(text.stdout.contains("timeline (deliveries ← GitHub, requests → PushWard):"))
        #expect(text.stdout.contains("→ end  PATCH /activities/"))
        // What the run cost, and what its card has cost so far (this replay is the card's only run).
        #expect(text.stdout.contains("cost: \(spent) PushWard updates (POST + PATCH)"))
        #expect(text.stdout.contains("· \(spent) updates on this card so far"))
        // The card as the phones show it: the ended end frame, drawn without colour (not a TTY).
        #expect(text.stdout.contains("2/2  Succeeded"))
        #expect(text.stdout.contains("█"))
        #expect(!text.stdout.contains("\u{1B}["))

        let unknown = try await run(["runs", "show", "12345", "--json"], replayed)
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("12345"))
    }

    @Test("deliveries list and show give each outcome: applied, ignored and rejected with reasons, duplicates")
    func deliveries() async throws {
        let replayed = try await Self.replay()

        let list = try await run(["deliveries", "list", "--json"], replayed)
        #expect(list.status == 0, "\(list.stderr)")
        let records = try #require(list.json?.arrayValue)
        #expect(records.count == DaemonFixtures.attempt10.count + 2)
        var byID: [String: JSONValue] = [:]
        for record in records { if let id = record["id"]?.stringValue { byID[id] = record } }
        for name in DaemonFixtures.attempt10 {
            #expect(byID[name]?["outcome"] == "applied", "\(name)")
            #expect(byID[name]?["duplicates"] == (name == Self.duplicated ? 1 : 0), "\(name)")
        }
        #expect(byID["ignored-check-run"]?["outcome"] == "ignored")
        #expect(byID["ignored-check-run"]?["reason"]?.stringValue?.contains("check_run") == true)
        #expect(byID["rejected-garbage"]?["outcome"] == "rejected")
        #expect(byID["rejected-garbage"]?["reason"]?.stringValue?.contains("not valid JSON") == true)
        // The list leaves payloads out.
        #expect(records.allSatisfy { $0["payload"] == nil })

        let show = try await run(["deliveries", "show", Self.duplicated, "--json"], replayed)
        #expect(show.status == 0, "\(show.stderr)")
        let shown = try #require(show.json)
        #expect(shown["outcome"] == "applied")
        #expect(shown["duplicates"] == 1)
        #expect(shown["event"] == "workflow_job")
        #expect(shown["action"] == "queued")
        #expect(shown["run_id"] == .number(Double(Self.runID)))
        #expect(shown["payload"] == (try JSONValue(parsing: try DaemonFixtures.data(Self.duplicated))))

        let rejected = try await run(["deliveries", "show", "rejected-garbage", "--json"], replayed)
        #expect(rejected.json?["outcome"] == "rejected")
        #expect(rejected.json?["reason"] == byID["rejected-garbage"]?["reason"])

        let table = try await run(["deliveries", "list"], replayed)
        #expect(table.status == 0)
        #expect(table.stdout.contains("(+1 duplicates)"))
        #expect(table.stdout.contains("ignored: "))

        let unknown = try await run(["deliveries", "show", "no-such-delivery"], replayed)
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no-such-delivery"))
    }

    @Test("explain replays the recorded deliveries against the settings it is given: held changes or none")
    func explainHeldChanges() async throws {
        let replayed = try await Self.replay()
        // The defaults coalesce (10 s) and settle: the replayed run's changes did not all go at once.
        let defaults = try await run(["explain", String(Self.runID), "--json"], replayed)
        #expect(defaults.status == 0, "\(defaults.stderr)")
        let held = defaults.json?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(held.contains { $0.contains("did not, to spend fewer of PushWard's paid updates") }, "\(held)")
        #expect(held.contains { $0.contains("held for the settle window") || $0.contains("coalesce window") })
        // The daemon's own configuration pushed every change: explain with it finds nothing held.
        let config = try replayed.directory.write(
            "explain-config.json", TestConfiguration(database: replayed.database).json)
        let configured = try await run(["explain", String(Self.runID), "--json", "--config", config], replayed)
        let sentences = configured.json?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(sentences.contains { $0.contains("went out as its own update") }, "\(sentences)")
        #expect(!sentences.contains { $0.contains("did not, to spend fewer") })
    }

    // MARK: check-config

    static let secret = "correct-horse-battery-staple"

    /// A configuration file with these secrets (none: the key is left out).
    static func configFile(_ secrets: [String], in directory: ScratchDirectory) throws -> String {
        var configuration = TestConfiguration(database: directory.path("bridge.sqlite"))
        configuration.secrets = secrets
        var json = configuration.json
        if secrets.isEmpty { json = json.replacingOccurrences(of: #""webhook_secrets":[]"#, with: "") }
        return try directory.write("config.json", json)
    }

    @Test("check-config prints actions with the buttons' URL and the widgets; actions without github.api is exit 78")
    func checkConfigActions() async throws {
        let directory = try ScratchDirectory()
        func config(_ name: String, api: Bool) throws -> String {
            let github = api ? #", "api": {"token": "ghp_secret_token_value"}"# : ""
            return try directory.write(
                name,
                """
                {"database": "\(directory.path("bridge.sqlite"))",
                 "github": {"webhook_secrets": ["\(Self.secret)"]\(github)},
                 "pushward": {"budget": "unlimited"},
                 "actions": {"public_url": "https://hooks.example.com/", "token_ttl": "30m",
                             "rules": [{"offer": ["approve"], "repositories": ["acme/*"], "approvers": ["mona"]}]},
                 "widgets": [{"slug": "ci-main", "name": "CI on main", "branches": ["main"]}]}
                """)
        }
        let good = try await BridgeProcess.run(
            ["check-config", "--config", try config("good.json", api: true)], in: directory)
        #expect(good.status == 0, "\(good.stderr)")
        let actions = good.json?["actions"]
        #expect(actions?["button_url"] == "https://hooks.example.com/actions/<token>")
        #expect(actions?["token_ttl"] == 1_800)
        #expect(actions?["require_authentication"] == true)
        #expect(actions?["rules"]?.arrayValue?.first?["offer"] == ["approve", "reject"])
        #expect(actions?["rules"]?.arrayValue?.first?["approvers"] == ["mona"])
        // Without routing the review goes wherever the key reaches: said, since nothing here can check it.
        #expect(good.stderr.contains("without routing, Approve and Reject go to everyone the PushWard key reaches"))
        #expect(!good.stdout.contains("ghp_secret_token_value"))
        #expect(
            good.json?["widgets"]
                == [
                    [
                        "slug": "ci-main", "name": "CI on main", "repositories": ["*"], "workflows": ["*"],
                        "branches": ["main"], "stale_after": 86_400, "forks": false,
                    ]
                ])
        let bad = try await BridgeProcess.run(
            ["check-config", "--config", try config("bad.json", api: false)], in: directory)
        #expect(bad.status == 78)
        #expect(bad.stderr.contains("actions") && bad.stderr.contains("github.api"), "\(bad.stderr)")
    }

    @Test("check-config prints alerts and routing, and says when PushWard refused this key's targets")
    func checkConfigRouting() async throws {
        let directory = try ScratchDirectory()
        let database = directory.path("bridge.sqlite")
        var rows = EngineRows()
        var gate = DispatchGate()
        gate.targetsRefusedAt = 1_796_083_200
        gate.targetsRefusedKey = BridgeEngine.fingerprint(ofKey: "hlk_personal")
        rows.gate = gate
        let opened = try BridgeDatabase(path: database)
        try opened.write { try $0.save(rows, at: 1_796_083_200) }
        func config(key: String) throws -> String {
            try directory.write(
                "config-\(key).json",
                """
                {"database": "\(database)", "github": {"webhook_secrets": ["\(Self.secret)"]},
                 "pushward": {"api_key": "\(key)", "budget": "unlimited"},
                 "alerts": {}, "routing": {"members": {"octocat": "usr_1"}}}
                """)
        }
        let refused = try await BridgeProcess.run(
            ["check-config", "--config", try config(key: "hlk_personal")], in: directory)
        #expect(refused.status == 0, "\(refused.stderr)")
        #expect(refused.stderr.contains("routing: PushWard refused a routing target at 2026-12-01T00:00:00Z"))
        #expect(refused.json?["routing"]?["members"] == ["octocat"])
        #expect(refused.json?["alerts"]?["rules"]?.arrayValue?.first?["branches"] == ["{default}"])
        #expect(!refused.stdout.contains("usr_1"), "member ids are not printed")
        let another = try await BridgeProcess.run(
            ["check-config", "--config", try config(key: "hlk_org")], in: directory)
        #expect(another.status == 0)
        #expect(!another.stderr.contains("refused a routing target"), "another key is tried again")
    }

    @Test("check-config exits 78 naming github.webhook_secrets when no secret is configured")
    func checkConfigWithoutSecret() async throws {
        let directory = try ScratchDirectory()
        let config = try Self.configFile([], in: directory)
        let result = try await BridgeProcess.run(["check-config", "--config", config], in: directory)
        #expect(result.reason == .exit)
        #expect(result.status == 78)
        #expect(result.stderr.contains("github.webhook_secrets"))
    }

    @Test("check-config and serve exit 78 naming the key for an empty or short secret")
    func weakSecretRefused() async throws {
        for secrets in [[""], ["short-secret"]] {
            let directory = try ScratchDirectory()
            let config = try Self.configFile(secrets, in: directory)
            for command in ["check-config", "serve"] {
                let result = try await BridgeProcess.run([command, "--config", config], in: directory)
                #expect(result.reason == .exit)
                #expect(result.status == 78, "\(command) \(secrets): \(result.stderr)")
                #expect(result.stderr.contains("github.webhook_secrets[0]"), "\(result.stderr)")
            }
        }
    }

    @Test("check-config masks secrets, and reads them from PUSHWARD_WEBHOOK_SECRETS_FILE and credentials")
    func checkConfigMasksSecrets() async throws {
        let directory = try ScratchDirectory()
        let withSecret = try Self.configFile([Self.secret], in: directory)
        let direct = try await BridgeProcess.run(["check-config", "--config", withSecret], in: directory)
        #expect(direct.status == 0, "\(direct.stderr)")
        let secrets = try #require(direct.json?["github"]?["webhook_secrets"]?.arrayValue)
        #expect(secrets.count == 1)
        #expect(secrets.first != .string(Self.secret))
        #expect(!direct.stdout.contains(Self.secret))
        #expect(!direct.stderr.contains(Self.secret))

        let withoutSecret = try Self.configFile([], in: directory)
        let secretFile = try directory.write("secrets.txt", "file-secret-abcdefghij\n")
        let fromFile = try await BridgeProcess.run(
            ["check-config", "--config", withoutSecret],
            environment: ["PUSHWARD_WEBHOOK_SECRETS_FILE": secretFile], in: directory)
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        #expect(fromFile.json?["github"]?["webhook_secrets"]?.arrayValue?.count == 1)
        #expect(!fromFile.stdout.contains("file-secret-abcdefghij"))

        let credentials = directory.path("credentials")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        try directory.write("credentials/webhook_secrets", "credential-one-abcdef\ncredential-two-abcdef\n")
        let fromCredentials = try await BridgeProcess.run(
            ["check-config", "--config", withoutSecret], environment: ["CREDENTIALS_DIRECTORY": credentials],
            in: directory)
        #expect(fromCredentials.status == 0, "\(fromCredentials.stderr)")
        #expect(fromCredentials.json?["github"]?["webhook_secrets"]?.arrayValue?.count == 2)
        #expect(!fromCredentials.stdout.contains("credential-one-abcdef"))
    }

    /// A configuration file that sends to `url` with `key` (nil: dry-run) and lets the budget decide.
    static func budgetConfigFile(url: String, key: String?, in directory: ScratchDirectory) throws -> String {
        var root = try #require(
            try JSONValue(parsing: Data(TestConfiguration(database: directory.path("bridge.sqlite")).json.utf8))
                .objectValue)
        var pushward = try #require(root["pushward"]?.objectValue)
        pushward["url"] = .string(url)
        pushward["api_key"] = key.map { .string($0) }
        pushward["fidelity"] = "auto"
        root["github"] = ["webhook_secrets": [.string(Self.secret)]]
        root["pushward"] = .object(pushward)
        return try directory.write("config-\(key ?? "dry").json", JSONValue.object(root).canonicalString)
    }

    @Test("check-config reads the budget once from GET /auth/me: used, limit, reset, forecast, next level and why")
    func checkConfigBudget() async throws {
        let directory = try ScratchDirectory()
        let fake = try FakePushWardServer()
        let resetsAt = Date().timeIntervalSince1970 + 10 * 86_400
        fake.setQuota(limit: 10_000, used: 40, resetsAt: resetsAt)
        let config = try Self.budgetConfigFile(url: fake.baseURL, key: fake.apiKey, in: directory)
        let result = try await BridgeProcess.run(["check-config", "--config", config], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let budget = try #require(result.json?["budget"]?.objectValue, "\(result.stdout)")
        #expect(budget["used"] == .number(40))
        #expect(budget["limit"] == .number(10_000))
        #expect(budget["resets_at"] == .string(GitHubTimestamp.format(resetsAt.rounded(.down))))
        // No database yet: the prior of 20 runs a day, over the 10 days left.
        let forecast = try #require(budget["forecast_runs"]?.doubleValue)
        #expect(forecast > 199 && forecast <= 200, "\(forecast)")
        #expect(budget["forecast_from"]?.stringValue?.contains("prior") == true)
        #expect(budget["next_run"]?["level"] == "full")
        #expect(budget["next_run"]?["reason"]?.stringValue?.contains("full (about 12 updates a run) fits") == true)
        #expect(fake.requests.filter { $0.path == "/auth/me" }.count == 1)
        // Nothing is spent by asking.
        #expect(fake.quota.used == 40)
    }

    @Test("check-config forecasts from the runs the database recorded, read-only")
    func checkConfigBudgetFromDatabase() async throws {
        let replayed = try await Self.replay()
        let fake = try FakePushWardServer()
        fake.setQuota(limit: 10_000, used: 40, resetsAt: Date().timeIntervalSince1970 + 10 * 86_400)
        let config = try Self.budgetConfigFile(url: fake.baseURL, key: fake.apiKey, in: replayed.directory)
        let result = try await BridgeProcess.run(
            ["check-config", "--config", config, "--database", replayed.database], in: replayed.directory)
        #expect(result.status == 0, "\(result.stderr)")
        let budget = try #require(result.json?["budget"]?.objectValue, "\(result.stdout)")
        #expect(budget["forecast_from"]?.stringValue?.contains(replayed.database) == true)
        // The replayed run counts on top of the prior's 20 a day: more than 200 over 10 days.
        let forecast = try #require(budget["forecast_runs"]?.doubleValue)
        #expect(forecast > 200.5 && forecast <= 210, "\(forecast)")
    }

    @Test("the budget report: dry-run without a key, planner off with budget unlimited, a fixed budget caps the limit")
    func budgetReportCases() {
        var configuration = BridgeConfiguration()
        #expect(BudgetCheck.report(configuration, answer: nil, forecast: .prior, at: 0) == "dry-run: no API key")
        configuration.apiKey = "hlk_test"
        configuration.pushwardBudget = .unlimited
        #expect(
            BudgetCheck.report(configuration, answer: nil, forecast: .prior, at: 0).stringValue?.hasPrefix("unlimited")
                == true)
        configuration.pushwardBudget = .fixed(100)
        let usage = PushWardUsage(liveActivityUpdatesUsed: 10, liveActivityUpdatesLimit: nil, quotaResetsAt: 86_400)
        let report = BudgetCheck.report(configuration, answer: .usage(usage), forecast: .prior, at: 0)
        #expect(report["limit"] == .number(100))
        #expect(report["resets_at"] == "1970-01-02T00:00:00Z")
    }

    @Test("check-config names PushWard's refusal of the key in the budget, and still exits 0")
    func checkConfigBudgetRefusedKey() async throws {
        let directory = try ScratchDirectory()
        let fake = try FakePushWardServer()
        let config = try Self.budgetConfigFile(url: fake.baseURL, key: "hlk_not_this_one", in: directory)
        let result = try await BridgeProcess.run(["check-config", "--config", config], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let error = try #require(result.json?["budget"]?["error"]?.stringValue, "\(result.stdout)")
        #expect(error.contains("GET /auth/me answered 401 token.invalid"), "\(error)")
    }

    @Test("check-config says so when the budget cannot be read, and still exits 0; without a key, dry-run")
    func checkConfigBudgetUnreadable() async throws {
        let directory = try ScratchDirectory()
        // A port bound but not listening: connections are refused, and no other test running in
        // parallel can start a server on it meanwhile (a stopped server's port could be reused).
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(holder, $0, length) == 0 && getsockname(holder, $0, &length) == 0
            }
        }
        #expect(bound)
        let url = "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
        let config = try Self.budgetConfigFile(url: url, key: "hlk_test", in: directory)
        let failed = try await BridgeProcess.run(["check-config", "--config", config], in: directory)
        #expect(failed.status == 0, "\(failed.stderr)")
        let error = try #require(failed.json?["budget"]?["error"]?.stringValue, "\(failed.stdout)")
        #expect(error.contains("GET /auth/me got no answer"))

        let dry = try Self.budgetConfigFile(url: url, key: nil, in: directory)
        let dryRun = try await BridgeProcess.run(["check-config", "--config", dry], in: directory)
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        #expect(dryRun.json?["budget"] == "dry-run: no API key")
    }

    @Test("the read-only commands refuse a database URI they cannot read with exit 78, without its password")
    func readOnlyCommandsRefuseURIs() async throws {
        let directory = try ScratchDirectory()
        let result = try await BridgeProcess.run(
            ["runs", "list", "--database", "mysql://bridge:pw-x@db/bridge"], in: directory)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("database"))
        #expect(!result.stderr.contains("pw-"))
    }

    @Test(
        "a PostgreSQL database that cannot be reached fails the read-only commands, saying where, without its password")
    func readOnlyCommandsSayAnUnreachablePostgres() async throws {
        let directory = try ScratchDirectory()
        let result = try await BridgeProcess.run(
            ["runs", "list", "--database", "postgresql://bridge:pw-\u{202E}\u{1F511}@127.0.0.1:9/bridge"], in: directory
        )
        #expect(result.status == 1, "\(result.stderr)")
        #expect(
            result.stderr.contains("cannot connect to postgresql://bridge:***@127.0.0.1:9/bridge"), "\(result.stderr)")
        #expect(!result.stderr.contains("pw-"))
    }
}

/// `ConfigurationLoader.load(path:environment:)` in-process: the environment beats the file, a
/// secret from a file or a systemd credential beats a plain variable.
@Suite("configuration loader overrides")
struct ConfigurationLoaderTests {
    let directory: ScratchDirectory
    let config: String

    init() throws {
        directory = try ScratchDirectory()
        var configuration = TestConfiguration(database: directory.path("from-file.sqlite"))
        configuration.secrets = ["from-the-file-secret"]
        config = try directory.write("config.json", configuration.json)
    }

    @Test("without overrides the file's secrets stand")
    func fileOnly() throws {
        let loaded = try ConfigurationLoader.load(path: config, environment: [:])
        #expect(loaded.webhookSecrets == ["from-the-file-secret"])
        #expect(loaded.database == directory.path("from-file.sqlite"))
    }

    @Test(
        "PUSHWARD_WEBHOOK_SECRETS replaces them: one a line, a comma is part of a secret, CRLF and blank lines dropped")
    func variable() throws {
        let loaded = try ConfigurationLoader.load(
            path: config,
            environment: [
                "PUSHWARD_WEBHOOK_SECRETS": "one,two-0123456789\r\n\nthree three 0123456789\n",
                "PUSHWARD_DATABASE": "/tmp/other.sqlite",
            ])
        #expect(loaded.webhookSecrets == ["one,two-0123456789", "three three 0123456789"])
        #expect(loaded.database == "/tmp/other.sqlite")
    }

    @Test("PUSHWARD_WEBHOOK_SECRETS_FILE is read (trailing newline dropped) and beats the variable")
    func secretsFile() throws {
        let file = try directory.write("secrets", "rotated-new\nrotated-old\n")
        let loaded = try ConfigurationLoader.load(
            path: config, environment: ["PUSHWARD_WEBHOOK_SECRETS_FILE": file, "PUSHWARD_WEBHOOK_SECRETS": "plain"])
        #expect(loaded.webhookSecrets == ["rotated-new", "rotated-old"])
    }

    @Test("$CREDENTIALS_DIRECTORY/webhook_secrets beats both")
    func credential() throws {
        let credentials = directory.path("creds")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        try directory.write("creds/webhook_secrets", "from-systemd\n")
        let file = try directory.write("secrets", "from-file")
        let loaded = try ConfigurationLoader.load(
            path: config,
            environment: [
                "CREDENTIALS_DIRECTORY": credentials, "PUSHWARD_WEBHOOK_SECRETS_FILE": file,
                "PUSHWARD_WEBHOOK_SECRETS": "plain",
            ])
        #expect(loaded.webhookSecrets == ["from-systemd"])

        // A credentials directory without that credential falls through to the file.
        let empty = directory.path("no-creds")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let fallback = try ConfigurationLoader.load(
            path: config, environment: ["CREDENTIALS_DIRECTORY": empty, "PUSHWARD_WEBHOOK_SECRETS_FILE": file])
        #expect(fallback.webhookSecrets == ["from-file"])
    }

    @Test("an unreadable PUSHWARD_WEBHOOK_SECRETS_FILE is an error naming it")
    func unreadableSecretsFile() {
        let missing = directory.path("nope")
        #expect {
            _ = try ConfigurationLoader.load(path: config, environment: ["PUSHWARD_WEBHOOK_SECRETS_FILE": missing])
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.key == "PUSHWARD_WEBHOOK_SECRETS_FILE" && error.problem.contains(missing)
        }
    }

    @Test("serving problems name github.webhook_secrets; describe masks every secret")
    func problemsAndMasking() throws {
        var configuration = try ConfigurationLoader.load(path: config, environment: [:])
        #expect(ConfigurationLoader.servingProblems(configuration).isEmpty)
        configuration.apiKey = "pushward-api-key-0123456789"
        let described = ConfigurationLoader.describe(configuration).canonicalString
        #expect(!described.contains("from-the-file-secret"))
        #expect(!described.contains("pushward-api-key-0123456789"))

        configuration.webhookSecrets = []
        #expect(ConfigurationLoader.servingProblems(configuration).map(\.key) == ["github.webhook_secrets"])
        // The example's placeholder starts on loopback (make run uses it) but is warned about.
        configuration.webhookSecrets = ["change-me-to-the-secret-of-your-github-webhook"]
        #expect(ConfigurationLoader.servingProblems(configuration).isEmpty)
        #expect(ConfigurationLoader.servingWarnings(configuration).count == 1)
    }

    @Test(
        "an empty, blank or short secret, and the placeholder off loopback, are serving problems naming the key",
        arguments: [
            ("", "127.0.0.1:8080", "empty"),
            ("   \t  ", "127.0.0.1:8080", "white space"),
            ("\u{3000}\u{3000}\u{3000}\u{3000}\u{3000}\u{3000}", "127.0.0.1:8080", "white space"),
            ("fifteen-bytes-x", "127.0.0.1:8080", "15 bytes"),
            ("change-me-to-the-secret-of-your-github-webhook", "0.0.0.0:8080", "placeholder"),
            ("change-me-to-the-secret-of-your-github-webhook", "[::]:8080", "placeholder"),
            ("change-me-to-the-secret-of-your-github-webhook", "unix:/run/pushward-bridge/hook.sock", "placeholder"),
        ])
    func weakSecrets(secret: String, listen: String, reason: String) throws {
        var configuration = try ConfigurationLoader.load(path: config, environment: [:])
        configuration.listen = listen
        configuration.webhookSecrets = ["a-good-secret-0123456789", secret]
        let problems = ConfigurationLoader.servingProblems(configuration)
        #expect(problems.map(\.key) == ["github.webhook_secrets[1]"])
        #expect(problems.first?.problem.contains(reason) == true, "\(problems)")
    }

    @Test("16 bytes is enough, counted in UTF-8; the placeholder on every loopback spelling is allowed")
    func acceptableSecrets() throws {
        var configuration = try ConfigurationLoader.load(path: config, environment: [:])
        configuration.webhookSecrets = ["sixteen-bytes-xy", "ü-is-two-bytes-x"]
        #expect(ConfigurationLoader.servingProblems(configuration).isEmpty)
        configuration.webhookSecrets = ["change-me-to-the-secret-of-your-github-webhook"]
        for listen in ["127.0.0.1:8080", "127.1.2.3:0", "localhost:8080", "[::1]:8080"] {
            configuration.listen = listen
            #expect(ConfigurationLoader.servingProblems(configuration).isEmpty, "\(listen)")
        }
    }

    @Test("the admin listener needs no token on loopback or a Unix socket, and one anywhere else")
    func adminTokenRule() throws {
        var configuration = try ConfigurationLoader.load(path: config, environment: [:])
        for listen in ["127.0.0.1:9090", "[::1]:9090", "localhost:9090", "unix:/run/pushward-bridge/admin.sock"] {
            configuration.adminListen = listen
            #expect(ConfigurationLoader.servingProblems(configuration).isEmpty, "\(listen)")
        }
        for listen in ["0.0.0.0:9090", "[::]:9090", "10.0.0.5:9090", "127.example.com:9090"] {
            configuration.adminListen = listen
            #expect(ConfigurationLoader.servingProblems(configuration).map(\.key) == ["admin_token"], "\(listen)")
        }
    }

    @Test("PUSHWARD_URL must be https, or http to a loopback host")
    func pushwardURLFromTheEnvironment() throws {
        for good in ["https://api.pushward.app", "http://127.0.0.1:8787", "http://localhost:1", "http://[::1]:8787"] {
            let loaded = try ConfigurationLoader.load(path: config, environment: ["PUSHWARD_URL": good])
            #expect(loaded.pushwardURL == good)
        }
        for bad in ["http://api.pushward.app", "http://127.example.com", "ftp://x", "api.pushward.app", "https://"] {
            #expect(throws: ConfigurationError.self, "\(bad)") {
                _ = try ConfigurationLoader.load(path: config, environment: ["PUSHWARD_URL": bad])
            }
        }
    }

    @Test(
        "the database URI comes from the database_url credential or PUSHWARD_DATABASE_FILE, so no password sits in a file"
    )
    func databaseFromCredentialOrFile() throws {
        let uri = "postgresql://bridge:s3cr\u{E9}t@db.internal/bridge"
        let credentials = directory.path("db-creds")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        try directory.write("db-creds/database_url", uri + "\n")
        let fromCredential = try ConfigurationLoader.load(
            path: config, environment: ["CREDENTIALS_DIRECTORY": credentials, "PUSHWARD_DATABASE": "/tmp/plain.sqlite"])
        #expect(fromCredential.database == uri)
        #expect(try fromCredential.databaseLocation() == .postgresql(uri: uri))

        let file = try directory.write("database-url", uri + "\n")
        let fromFile = try ConfigurationLoader.load(path: config, environment: ["PUSHWARD_DATABASE_FILE": file])
        #expect(fromFile.database == uri)
    }

    @Test("PUSHWARD_DATABASE with another scheme is refused, naming the variable")
    func databaseVariableWithOtherScheme() {
        #expect {
            _ = try ConfigurationLoader.load(path: config, environment: ["PUSHWARD_DATABASE": "mysql://db/bridge"])
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.key == "PUSHWARD_DATABASE" && error.problem.contains("\"mysql://\"")
        }
    }

    @Test("a PostgreSQL database is served; another scheme is a serving problem that shows no password")
    func postgresIsServed() throws {
        var loaded = try ConfigurationLoader.load(path: config, environment: [:])
        loaded.database = "postgresql://bridge:hunter2-\u{1F511}@db/bridge?password=also-secret"
        #expect(ConfigurationLoader.servingProblems(loaded).allSatisfy { $0.key != "database" })
        loaded.database = "mysql://bridge:hunter2-\u{1F511}@db/bridge"
        let problem = try #require(ConfigurationLoader.servingProblems(loaded).first { $0.key == "database" })
        #expect(!problem.description.contains("hunter2"))
    }
}

extension CLITests {
    @Test("an approver with no routing.members entry is warned about: no review would reach them")
    func unreachableApproverWarned() throws {
        var configuration = BridgeConfiguration()
        configuration.webhookSecrets = ["approvers-secret-0123"]
        configuration.actions = ActionSettings(
            publicURL: "https://h.example", rules: [ActionRule(offer: [.approve], approvers: ["mona", "hubot"])])
        configuration.routing = RoutingSettings(members: ["mona": "usr_mona"])
        let warnings = ConfigurationLoader.servingWarnings(configuration)
        #expect(warnings.contains { $0.contains("approvers hubot have no routing.members entry") }, "\(warnings)")
        configuration.routing = RoutingSettings(members: ["mona": "usr_mona", "hubot": "usr_hubot"])
        #expect(!ConfigurationLoader.servingWarnings(configuration).contains { $0.contains("approvers") })
    }
}
