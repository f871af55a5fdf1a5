import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// Recovery through the whole daemon: deliveries GitHub (the fake) failed to send while the
/// daemon was down are found in the hook's log at the next start, asked for again, arrive through
/// `POST /webhook`, and the card ends exactly as it would have with nothing missed.
@Suite("Recovery end to end", .serialized, .timeLimit(.minutes(3)))
struct RecoveryEndToEndTests {
    static let secret = "recovery-secret-0123456"
    static let token = "ghp_recovery_test_token"
    static let waves: [[RunScript.Job]] = [
        [RunScript.Job("lint", duration: 20)],
        [RunScript.Job("test (a)", duration: 60), RunScript.Job("test (b)", duration: 90)],
        [RunScript.Job("deploy", duration: 30)],
    ]

    /// A daemon on `database`, delivering to `pushward`, recovering from `github`. The run's
    /// deliveries carry times of ten minutes ago: a long `completion_grace` keeps the daemon from
    /// concluding, between two jobs, that the run ended with its last finished job.
    static func start(
        database: String, pushward: FakePushWardServer, github: FakeGitHubAPI?, logs: LineLog,
        staleAfter: String = "1h", hooks: String = #"["repos/acme/widgets/hooks/1"]"#
    ) throws -> Daemon {
        let api =
            github.map {
                #", "api": {"url": "\#($0.baseURL)", "token": "\#(token)", "hooks": \#(hooks), "#
                    + #""sweep_interval": "30s", "max_redeliveries_per_minute": 600, "stale_after": "\#(staleAfter)"}"#
            } ?? ""
        let json = """
            {"listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "\(database)",
             "activity": {"completion_grace": "1h"},
             "github": {"webhook_secrets": ["\(secret)"]\(api)},
             "pushward": {"url": "\(pushward.baseURL)", "api_key": "\(pushward.apiKey)", "end_delay": "0s",
                          "end_display_time": "0s", "min_update_interval": "0s", "fidelity": "full",
                          "coalesce": "0s", "max_updates_per_hour": 3600}}
            """
        let daemon = try Daemon.start(
            configuration: try BridgeConfiguration(json: Data(json.utf8)),
            logger: Logger(label: "test", minimumLevel: .debug, sink: { logs.append($0) }))
        github?.setWebhookURL("http://127.0.0.1:\(daemon.port)/webhook")
        return daemon
    }

    static func scratch() throws -> String {
        let directory = NSTemporaryDirectory() + "recovery-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    static var slug: String {
        ActivityIdentity.forRun(repository: RunScript(start: 0).repository, workflow: "CI", scope: .repository).slug
    }

    /// True once PushWard took the card's end (a PATCH to `ended`; a card just created reads as
    /// `ended` in the fake's store before its first update, so the state alone does not say).
    static func ended(_ pushward: FakePushWardServer) -> Bool {
        pushward.requests.contains {
            $0.method == "PATCH" && $0.path == "/activities/\(slug)" && $0.body?["state"] == "ended"
                && (200..<300).contains($0.status)
        }
    }

    /// Live Activity updates PushWard took (every 2xx POST and PATCH costs one of the month's).
    static func updates(_ pushward: FakePushWardServer) -> Int {
        pushward.requests.filter { ["POST", "PATCH"].contains($0.method) && (200..<300).contains($0.status) }.count
    }

    /// The card as PushWard ended up with it, without what differs between two daemons by
    /// nature (the times PushWard stamped).
    static func finalCard(_ pushward: FakePushWardServer) -> JSONValue? {
        guard let stored = pushward.activities[slug] else { return nil }
        return ["state": .string(stored.state), "content": .object(stored.content)]
    }

    @Test("down while the run went on: the next start asks for what was missed and the card ends as if nothing was")
    func missedWhileDown() async throws {
        let script = RunScript(start: Date().timeIntervalSince1970 - 600)
        let events = script.deliveries(waves: Self.waves)
        let split = events.count / 3

        // The control: every delivery arrives.
        let controlDirectory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: controlDirectory) }
        let controlPushWard = try FakePushWardServer()
        let controlGitHub = try FakeGitHubAPI(secret: Self.secret, credentials: .token(Self.token))
        let control = try Self.start(
            database: controlDirectory + "/bridge.sqlite", pushward: controlPushWard, github: controlGitHub,
            logs: LineLog())
        for event in events {
            let (name, body) = PayloadEncoder.encode(event)
            #expect(await controlGitHub.deliver(event: name, body: body) == 202)
        }
        #expect(
            await DispatchEndToEndTests.eventually(timeout: 60) {
                Self.ended(controlPushWard)
            })
        await control.shutdown()

        // The outage: the daemon stops after a third of the run; GitHub's attempts meanwhile fail.
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pushward = try FakePushWardServer()
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .token(Self.token))
        let logs = LineLog()
        var daemon = try Self.start(
            database: directory + "/bridge.sqlite", pushward: pushward, github: github, logs: logs)
        #expect(await github.deliver(events.prefix(split)).allSatisfy { $0 == 202 })
        await daemon.shutdown()
        #expect(await github.deliver(events.dropFirst(split)).allSatisfy { $0 == 0 }, "nothing listens")
        #expect(!Self.ended(pushward))

        daemon = try Self.start(database: directory + "/bridge.sqlite", pushward: pushward, github: github, logs: logs)
        #expect(
            await DispatchEndToEndTests.eventually(timeout: 60) { Self.ended(pushward) })
        try await Task.sleep(for: .milliseconds(300))
        let spentAtEnd = Self.updates(pushward)
        try await Task.sleep(for: .seconds(2))
        let page = try await AlertEndToEndTests.get("/", port: daemon.adminPort)
        await daemon.shutdown()
        #expect(Self.updates(pushward) == spentAtEnd, "nothing more is sent once the run ended")

        #expect(page.contains("<span id=\"redeliveries\">\(events.count - split)</span> redeliveries asked for"))
        #expect(Self.finalCard(pushward) == Self.finalCard(controlPushWard))
        #expect(pushward.violations.isEmpty, "\(pushward.violations)")
        // Recovery costs what the deliveries cost, nothing on top: at most one update per delivery
        // (every change is pushed here, so how many depends on how they group), the create and the
        // end.
        let spent = Self.updates(pushward)
        #expect((3...events.count + 2).contains(spent), "\(spent) updates for \(events.count) deliveries")
        #expect((3...events.count + 2).contains(Self.updates(controlPushWard)))
        // Each missed delivery asked for once, in order, and each arrived once.
        let missed = events.count - split
        let redelivered = github.log.filter(\.redelivery)
        #expect(redelivered.count == missed)
        #expect(redelivered.allSatisfy { $0.statusCode == 202 })
        #expect(redelivered.map(\.guid) == github.log.filter { !$0.redelivery }.suffix(missed).map(\.guid))
        let database = try BridgeDatabase(path: directory + "/bridge.sqlite", readOnly: true)
        #expect(try database.listDeliveries(limit: 100).count == events.count)
        #expect(try database.recentRecoveryRequests().count == missed)
        #expect(
            logs.all.filter { $0.contains("asked GitHub to redeliver a delivery the bridge never received") }.count
                == missed)
        #expect(!logs.all.contains { $0.contains(Self.token) })
        let explained = try Self.explain(script.runID, database: directory + "/bridge.sqlite")
        #expect(explained.contains("\(missed) of them came back through recovery"), "\(explained)")
    }

    @Test("with no hooks to sweep, a wrong token met by a run lookup is said plainly once, and on the page")
    func wrongTokenWithoutHooks() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pushward = try FakePushWardServer()
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .token("ghp_a_different_token"))
        let logs = LineLog()
        let daemon = try Self.start(
            database: directory + "/bridge.sqlite", pushward: pushward, github: github, logs: logs, staleAfter: "5s",
            hooks: "[]")
        let (name, body) = PayloadEncoder.encode(RunScript(start: Date().timeIntervalSince1970).run("requested", at: 0))
        #expect(await github.deliver(event: name, body: body) == 202)
        #expect(await DispatchEndToEndTests.eventually { daemon.recovery.current.problem != nil })
        // Two more lookup rounds: still one line.
        try await Task.sleep(for: .seconds(6))
        let page = try await AlertEndToEndTests.get("/", port: daemon.adminPort)
        await daemon.shutdown()
        let said = logs.all.filter { $0.contains("recovery from GitHub failed") }
        #expect(said.count == 1, "\(said)")
        #expect(said.first?.contains("GitHub refused the credential (401)") == true)
        #expect(said.first?.contains("check github.api's token") == true)
        #expect(github.requests.filter { $0.status == 401 }.count >= 2, "a lookup each round, said once")
        #expect(page.contains("GitHub refused the credential (401)"))
        #expect(!logs.all.contains { $0.contains(Self.token) })
    }

    @Test("GitHub's rate limit spent: the sweep stops at its first 403, says when it resets, and sends nothing more")
    func rateLimitRespected() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pushward = try FakePushWardServer()
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .token(Self.token))
        github.setRateLimit(remaining: 0, resetIn: 3_600)
        let logs = LineLog()
        let daemon = try Self.start(
            database: directory + "/bridge.sqlite", pushward: pushward, github: github, logs: logs, staleAfter: "5s")
        // A quiet run for the lookups to want, too.
        let (name, body) = PayloadEncoder.encode(RunScript(start: Date().timeIntervalSince1970).run("requested", at: 0))
        #expect(await github.deliver(event: name, body: body) == 202)
        #expect(await DispatchEndToEndTests.eventually { logs.all.contains { $0.contains("rate limit is spent") } })
        try await Task.sleep(for: .seconds(8))
        await daemon.shutdown()
        #expect(github.requests.count == 1, "\(github.requests.map(\.path))")
        #expect(github.requests.first?.status == 403)
        #expect(logs.all.contains { $0.contains("github.rate_limit_reset") })
    }

    @Test("an App key file that is not a key stops the start, naming the file and what a key looks like")
    func badAppKey() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keyFile = directory + "/app.pem"
        try "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".write(
            toFile: keyFile, atomically: true, encoding: .utf8)
        let json = """
            {"listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "\(directory)/bridge.sqlite",
             "github": {"webhook_secrets": ["\(Self.secret)"],
                        "api": {"app_id": 7, "private_key_file": "\(keyFile)", "hooks": ["app"]}}}
            """
        do {
            _ = try Daemon.start(
                configuration: try BridgeConfiguration(json: Data(json.utf8)),
                logger: Logger(label: "test", sink: { _ in }))
            Issue.record("started with a certificate for a key")
        } catch let error as ConfigurationError {
            #expect(error.key == "github.api.private_key_file")
            #expect(error.problem.contains(keyFile) && error.problem.contains("BEGIN RSA PRIVATE KEY"))
        }
    }

    /// `pushward-bridge explain RUN_ID` on the database, as a maintainer runs it.
    static func explain(_ runID: Int, database: String) throws -> String {
        let scratch = try ScratchDirectory()
        let result = try BridgeProcess.runToCompletion(["explain", String(runID), "--database", database], in: scratch)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    @Test("the run's completed delivery never comes: a lookup of the quiet run ends it with GitHub's conclusion")
    func completedNeverArrives() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pushward = try FakePushWardServer()
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .token(Self.token))
        let script = RunScript(start: Date().timeIntervalSince1970 - 600)
        let failing: [[RunScript.Job]] = [
            [RunScript.Job("lint", duration: 20)], [RunScript.Job("test (a)", duration: 60, conclusion: "failure")],
        ]
        let events = script.deliveries(waves: failing, conclusion: "failure")
        // GitHub's API: the run as its completed delivery has it, and each job's last state.
        let bodies = events.map { try? JSONValue(parsing: PayloadEncoder.encode($0).body) }
        // The REST API's run names its repository inside; a webhook has it beside the run.
        guard case .object(var run)? = bodies.last??["workflow_run"], let repository = bodies.last??["repository"]
        else {
            Issue.record("the script's last delivery is not the completed run")
            return
        }
        run["repository"] = repository
        var jobs: [Int: JSONValue] = [:]
        for body in bodies { if let job = body?["workflow_job"], let id = job["id"]?.intValue { jobs[id] = job } }
        github.setRun(
            repository: "acme/widgets", id: script.runID, attempt: 1, run: .object(run),
            jobs: [
                "total_count": .number(Double(jobs.count)), "jobs": .array(jobs.keys.sorted().compactMap { jobs[$0] }),
            ])
        let logs = LineLog()
        let daemon = try Self.start(
            database: directory + "/bridge.sqlite", pushward: pushward, github: github, logs: logs, staleAfter: "5s")
        #expect(await github.deliver(events.dropLast()).allSatisfy { $0 == 202 })
        #expect(await DispatchEndToEndTests.eventually(timeout: 60) { Self.ended(pushward) })
        await daemon.shutdown()

        #expect(github.runLookups >= 2, "the run and its jobs")
        let database = try BridgeDatabase(path: directory + "/bridge.sqlite", readOnly: true)
        let stored = try #require(
            try database.storedRun(RunKey(repository: "acme/widgets", runID: script.runID, attempt: 1)))
        #expect(stored.state.completion?.conclusion == "failure")
        #expect(stored.state.completion?.source == .runEvent, "GitHub's own completed run, not the grace's guess")
        let fromAPI = try database.listDeliveries(limit: 100).filter { $0.hookID == APIObservation.hookID }
        #expect(fromAPI.contains { $0.event == "workflow_run" && $0.outcome == .applied })
        #expect(logs.all.contains { $0.contains("a quiet run was read from GitHub's API and brought up to date") })
        let explained = try Self.explain(script.runID, database: directory + "/bridge.sqlite")
        #expect(explained.contains("The run was completed from GitHub's API at "), "\(explained)")
        #expect(explained.contains("were read from GitHub's API rather than sent by its webhook"))
        #expect(pushward.violations.isEmpty, "\(pushward.violations)")
    }

    @Test("a wrong token is said plainly once, blocks nothing else, and shows in /metrics")
    func wrongToken() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pushward = try FakePushWardServer()
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .token("ghp_a_different_token"))
        let logs = LineLog()
        let daemon = try Self.start(
            database: directory + "/bridge.sqlite", pushward: pushward, github: github, logs: logs)
        #expect(await DispatchEndToEndTests.eventually { !github.requests.isEmpty })
        #expect(await DispatchEndToEndTests.eventually { daemon.recovery.current.problem != nil })
        // Webhooks still work.
        let event = RunScript(start: Date().timeIntervalSince1970 - 60).run("requested", at: 0)
        let (name, body) = PayloadEncoder.encode(event)
        #expect(await github.deliver(event: name, body: body) == 202)
        let metrics = try await AlertEndToEndTests.get("/metrics", port: daemon.adminPort)
        let page = try await AlertEndToEndTests.get("/", port: daemon.adminPort)
        await daemon.shutdown()
        #expect(page.contains("<h2>Recovery from GitHub</h2>"))
        #expect(page.contains("GitHub refused the credential (401)"))
        let problem = try #require(daemon.recovery.current.problem)
        #expect(problem.contains("GitHub refused the credential (401)"))
        #expect(problem.contains("check github.api's token"))
        #expect(logs.all.filter { $0.contains("recovery from GitHub failed") }.count == 1)
        #expect(!logs.all.contains { $0.contains(Self.token) })
        #expect(metrics.contains("pushward_bridge_github_recovery_blocked 1"))
        #expect(metrics.contains(#"pushward_bridge_github_sweeps_total{outcome="failed"} 1"#))
        #expect(metrics.contains(#"pushward_bridge_github_api_requests_total{outcome="401"} 1"#), "\(metrics)")
    }
}
