import BridgeCore
import BridgeDaemon
import BridgeTestSupport
import Foundation
import Testing

/// Recovery from GitHub with two instances on one PostgreSQL database: only the leader reads the
/// hook's delivery log (a follower would spend the same API allowance asking for the same
/// redeliveries), and an instance that takes the lead sweeps at once, since what GitHub sent to
/// the instance that went away is in the log as failed and nothing else brings it back.
@Suite("High availability: recovery", .serialized, .timeLimit(.minutes(3)))
struct HighAvailabilityRecoveryTests {
    typealias Recovery = RecoveryEndToEndTests

    /// GETs of the hook's delivery log the fake GitHub answered.
    static func logReads(_ github: FakeGitHubAPI) -> Int {
        github.requests.filter { $0.method == "GET" && $0.path.hasPrefix(github.hookPath + "/deliveries") }.count
    }

    static func leads(_ daemon: Daemon) async -> Bool {
        let metrics = (try? await AlertEndToEndTests.get("/metrics", port: daemon.adminPort)) ?? ""
        return metrics.contains("pushward_bridge_leader 1\n")
    }

    /// Whether `condition` holds within `timeout` seconds, asked every 50 ms.
    static func within(_ timeout: Double, _ condition: () async -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return await condition()
    }

    @Test("only the leader sweeps; the instance taking over sweeps at once and brings back what the other missed")
    func leaderSweeps() async throws {
        let script = RunScript(start: Date().timeIntervalSince1970 - 600)
        let events = script.deliveries(waves: Recovery.waves)
        let split = events.count / 3
        let uri = try await PostgresServer.makeSharedDatabase()
        let pushward = try FakePushWardServer()
        let github = try FakeGitHubAPI(secret: Recovery.secret, credentials: .token(Recovery.token))

        let first = try Recovery.start(database: uri, pushward: pushward, github: github, logs: LineLog())
        var firstRunning = true
        defer { if firstRunning { Task { await first.shutdown() } } }
        // Only a leader sweeps, and it sweeps at once: its first read of the log says it leads.
        // Waited for as an event (the fake's request), not in a window of seconds.
        #expect(await github.until { Self.logReads(github) >= 1 }, "swept at start")
        #expect(await Self.leads(first))
        let readsByLeader = Self.logReads(github)

        let logs = LineLog()
        let second = try Recovery.start(database: uri, pushward: pushward, github: github, logs: logs)
        defer { Task { await second.shutdown() } }
        github.setWebhookURL("http://127.0.0.1:\(first.port)/webhook")
        // GitHub's deliveries block until answered: sent from a thread of their own, not one of
        // Swift's two cooperative threads, which the in-process daemons answering them need.
        let sentFirst = try await offPool { github.deliver(events.prefix(split)) }
        #expect(sentFirst.allSatisfy { $0 == 202 }, "\(sentFirst)")
        // Long enough for the follower's start and two of its looks at whether it leads.
        try await Task.sleep(for: .seconds(2.5))
        #expect(!(await Self.leads(second)))
        #expect(Self.logReads(github) == readsByLeader, "the follower read GitHub's delivery log")
        let followerPage = try await AlertEndToEndTests.get("/", port: second.adminPort)
        #expect(followerPage.contains("data-role=\"follower\""))
        #expect(!followerPage.contains("id=\"recovery\""), "a follower's board never moves")

        // The leader goes away; GitHub's attempts meanwhile fail, as they do behind a load
        // balancer that has not noticed yet.
        await first.shutdown()
        firstRunning = false
        let stoppedAt = Date()
        let sentMissed = try await offPool { github.deliver(events.dropFirst(split)) }
        #expect(sentMissed.allSatisfy { $0 == 0 }, "nothing listens: \(sentMissed)")
        github.setWebhookURL("http://127.0.0.1:\(second.port)/webhook")
        // The new leader sweeps when it takes the lead, not at the 30 s sweep interval: the card
        // ends, and GitHub has logged each missed delivery redelivered. Both are waited for as
        // the fakes' events; the time it took is printed, not bounded (a sanitizer slows it).
        let missedCount = events.count - split
        #expect(await pushward.until { Recovery.ended(pushward) })
        #expect(await github.until { github.log.filter(\.redelivery).count >= missedCount })
        print("high availability: the card ended \(Date().timeIntervalSince(stoppedAt)) s after the leader stopped")
        #expect(await Self.leads(second))
        let leaderPage = try await AlertEndToEndTests.get("/", port: second.adminPort)
        #expect(leaderPage.contains("<span id=\"redeliveries\">\(missedCount)</span> redeliveries asked for"))

        let missed = events.count - split
        let redelivered = github.log.filter(\.redelivery)
        #expect(redelivered.count == missed, "each missed delivery asked for once")
        #expect(redelivered.allSatisfy { $0.statusCode == 202 })
        #expect(pushward.violations.isEmpty, "\(pushward.violations)")
        let ends = pushward.requests.filter { $0.method == "PATCH" && $0.body?["state"] == "ended" }
        #expect(ends.count == 1)
        #expect(
            logs.all.filter { $0.contains("asked GitHub to redeliver a delivery the bridge never received") }.count
                == missed)
    }
}
