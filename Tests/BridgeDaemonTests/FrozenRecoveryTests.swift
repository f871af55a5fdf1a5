import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Two `pushward-bridge serve` processes on one PostgreSQL database, the leader frozen (SIGSTOP)
/// in the middle of recovery, asking GitHub for redeliveries one after another, and resumed
/// (SIGCONT) after the other instance took over. Each instance reaches the fakes through its own
/// proxies (`CountingProxy`), so what the old leader sent is counted apart from the new one's:
/// once resumed it must send nothing, to GitHub or to PushWard, although its sweep was cut off
/// between two requests and resumes where it stood.
@Suite("A leader frozen during recovery", .serialized, .timeLimit(.minutes(3)))
struct FrozenRecoveryTests {
    typealias Serve = CrashRecoveryTests.ServeProcess
    static let secret = "frozen-recovery-secret-0123"
    static let token = "ghp_frozen_recovery_token"
    /// Missed deliveries, asked for again at 10 a second: a sweep of about 12 s.
    static let jobs = 40

    /// One instance's proxies in front of the fakes.
    struct Route {
        let github: CountingProxy
        let pushward: CountingProxy

        init(github fake: FakeGitHubAPI, pushward: FakePushWardServer) throws {
            github = try CountingProxy(target: fake.baseURL)
            self.pushward = try CountingProxy(target: pushward.baseURL)
        }

        /// Requests that reached either fake through this instance's proxies at or after `instant`.
        func count(since instant: Date) -> Int {
            github.count(since: instant) + pushward.count(since: instant)
        }

        var redeliveries: Int { github.requests.filter { $0.method == "POST" }.count }

        /// What reached the fakes through this route since `instant`, for a failure to show.
        func requests(since instant: Date) -> [String] {
            (github.requests + pushward.requests).filter { $0.at >= instant }.map { "\($0.method) \($0.path)" }
        }
    }

    static func writeConfig(_ path: String, database: String, route: Route, apiKey: String) throws {
        let json = """
            {"listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "\(database)",
             "activity": {"completion_grace": "1h"},
             "github": {"webhook_secrets": ["\(secret)"],
                        "api": {"url": "\(route.github.baseURL)", "token": "\(token)",
                                "hooks": ["repos/acme/widgets/hooks/1"], "sweep_interval": "30s",
                                "max_redeliveries_per_minute": 600, "stale_after": "1h"}},
             "pushward": {"url": "\(route.pushward.baseURL)", "api_key": "\(apiKey)", "end_delay": "0s",
                          "end_display_time": "0s", "min_update_interval": "0s", "fidelity": "full",
                          "coalesce": "0s", "max_updates_per_hour": 3600}}
            """
        try json.write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test("frozen mid-sweep past its lease and resumed, the old leader sends nothing to GitHub or PushWard")
    func resumedLeaderSendsNothing() async throws {
        let uri = try await PostgresServer.makeSharedDatabase()
        let pushward = try FakePushWardServer()
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .token(Self.token))
        let directory = try ScratchDirectory()

        // GitHub failed to deliver a whole run: nothing listened.
        github.setWebhookURL("http://127.0.0.1:9/webhook")
        let script = RunScript(start: Date().timeIntervalSince1970 - 600)
        let events = script.deliveries(waves: [(0..<Self.jobs).map { RunScript.Job("job \($0) \u{202E}") }])
        #expect(await github.deliver(events).allSatisfy { $0 == 0 }, "nothing listens")

        let first = try Route(github: github, pushward: pushward)
        let second = try Route(github: github, pushward: pushward)
        let firstConfig = directory.path("first.json")
        let secondConfig = directory.path("second.json")
        try Self.writeConfig(firstConfig, database: uri, route: first, apiKey: pushward.apiKey)
        try Self.writeConfig(secondConfig, database: uri, route: second, apiKey: pushward.apiKey)

        let old = try Serve(configPath: firstConfig, log: directory.path("first.log"))
        var oldStopped = false
        defer {
            if !oldStopped {
                kill(old.process.processIdentifier, SIGCONT)
                _ = old.terminate()
            }
        }
        github.setWebhookURL("http://127.0.0.1:\(old.port)/webhook")
        let lead = try await HighAvailabilityTests.leader(uri)
        #expect(lead.pid == old.process.processIdentifier, "the first instance up leads")
        let new = try Serve(configPath: secondConfig, log: directory.path("second.log"))
        defer { _ = new.terminate() }
        // What GitHub redelivers from now on goes to the instance that stays.
        github.setWebhookURL("http://127.0.0.1:\(new.port)/webhook")

        // Freeze the leader while it works through the redeliveries, waiting for GitHub's answer
        // to one of them: its request has gone, its next one is still to be checked. (Frozen
        // between a check and curl's write, a request without a body would still go on waking:
        // no fence reaches into GitHub, SECURITY.md.)
        #expect(
            await DispatchEndToEndTests.eventually(timeout: 30) { first.redeliveries >= 8 },
            "the leader asked for \(first.redeliveries) redeliveries")
        first.github.holdNext(pathContaining: "/attempts")
        #expect(
            await DispatchEndToEndTests.eventually(timeout: 30) { first.github.isHolding },
            "the leader asked for another redelivery")
        kill(old.process.processIdentifier, SIGSTOP)
        // GitHub's answer waits in the frozen process's socket.
        first.github.release()
        let stoppedAt = Date()
        let beforeFreeze = (github: first.github.requests.count, pushward: first.pushward.requests.count)
        let takeover = try await HighAvailabilityTests.leader(uri, after: lead.epoch)
        #expect(takeover.pid == new.process.processIdentifier)
        let takenOverIn = Date().timeIntervalSince(stoppedAt)
        // The new leader sweeps at once; let it get going before the old one wakes.
        #expect(
            await DispatchEndToEndTests.eventually(timeout: 15) { second.github.requests.count >= 1 },
            "the new leader called GitHub")
        try await Task.sleep(for: .seconds(1))

        kill(old.process.processIdentifier, SIGCONT)
        let resumedAt = Date()
        let frozenFor = resumedAt.timeIntervalSince(stoppedAt)
        // The old leader's sweep was due to ask for the next redelivery 0.1 s after its last one.
        try await Task.sleep(for: .seconds(4))
        let fromOld = first.count(since: resumedAt)
        #expect(fromOld == 0, "the resumed leader sent \(first.requests(since: resumedAt))")
        let fromNew = second.count(since: resumedAt)
        #expect(second.redeliveries > 0, "the new leader went on with the redeliveries")
        #expect(fromNew > 0, "the new leader kept sending meanwhile")
        #expect(pushward.violations.isEmpty, "\(pushward.violations)")
        print(
            "leader frozen during recovery (\(events.count) deliveries missed): \(beforeFreeze.github) GitHub calls and \(beforeFreeze.pushward) "
                + "PushWard requests before SIGSTOP, lead taken over in \(Int(takenOverIn * 1_000)) ms, frozen "
                + "\(Int(frozenFor * 1_000)) ms; in the 4 s after SIGCONT \(fromOld) requests from it, \(fromNew) "
                + "from the new leader")

        // Resumed, it follows: it says so, and it still answers webhooks (as a follower).
        let log = directory.path("first.log")
        #expect(
            await DispatchEndToEndTests.eventually(timeout: 10) {
                ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("following: deliveries")
            }, "the resumed leader stepped down")
        // Its sweep stopped where the fence refused, quietly: nothing failed, there is nothing to fix.
        let oldLog = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(!oldLog.contains("recovery from GitHub failed"), "the withheld call was reported as a failure")
        #expect(old.terminate() == 0)
        oldStopped = true
        #expect(first.count(since: resumedAt) == 0, "nothing from it up to its stop either")
    }
}
