import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// Two `pushward-bridge serve` processes on one PostgreSQL database with the fake PushWard: a
/// run's deliveries spread over both, the leader killed (SIGKILL) or frozen (SIGSTOP) mid-run. The
/// card must end exactly as a single instance leaves it, nothing refused by the contract, one end
/// frame and one final frame.
@Suite("High availability", .serialized, .timeLimit(.minutes(4)))
struct HighAvailabilityTests {
    typealias Serve = CrashRecoveryTests.ServeProcess

    /// The configuration of both instances: CrashRecoveryTests' settings on `uri`.
    static func writeConfig(directory: String, fake: FakePushWardServer, uri: String) throws -> String {
        let path = try CrashRecoveryTests.writeConfig(directory: directory, fake: fake)
        let json = try String(contentsOfFile: path, encoding: .utf8)
            .replacingOccurrences(of: "\"\(directory)/bridge.sqlite\"", with: "\"\(uri)\"")
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The process id of the instance the leadership row names, once its epoch is past `epoch`.
    static func leader(_ uri: String, after epoch: Int64 = 0, within seconds: Double = 15) async throws -> (
        pid: Int32, epoch: Int64
    ) {
        let connection = try PostgresConnection(uri: uri)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let row = try? connection.queryOne("SELECT holder, epoch FROM leadership") {
                ($0.string(0) ?? "", $0.int64(1) ?? 0)
            }
            if let (holder, current) = row ?? nil, current > epoch,
                let pid = holder.split(separator: ":").last.flatMap({ Int32($0) })
            {
                return (pid, current)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw CrashRecoveryTests.Failure("no instance took the lead after epoch \(epoch) within \(seconds) s")
    }

    /// Waits until PushWard took the card's end (a PATCH to `ended`: a card just created reads as
    /// `ended` in the fake's store before its first update, so the state alone does not say);
    /// returns it.
    static func endedCard(_ fake: FakePushWardServer, within seconds: Double = 40) async throws -> StoredActivity? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let ended = fake.requests.contains {
                $0.method == "PATCH" && $0.body?["state"] == "ended" && (200..<300).contains($0.status)
            }
            if ended, let card = fake.activities.values.first { return card }
            try await Task.sleep(for: .milliseconds(50))
        }
        return fake.activities.values.first
    }

    /// GET `path` on an instance's admin listener: the body, nil when it did not answer 200.
    static func admin(_ path: String, port: Int) async throws -> String? {
        let url = try #require(URL(string: "http://127.0.0.1:\(port)\(path)"))
        let (data, response) = try await URLSession.shared.data(from: url)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    static func expectOneEndAndOneFinal(_ fake: FakePushWardServer, _ context: String) {
        #expect(fake.violations.isEmpty, "\(context): \(fake.violations)")
        let ends = fake.requests.filter { $0.method == "PATCH" && $0.body?["state"] == "ended" }
        #expect(ends.count == 1, "\(context): end frames \(ends.count)")
        let finals = fake.requests.filter { $0.body?["content"]?["state"] == "Succeeded" }
        #expect(finals.count == 1, "\(context): final frames \(finals.count)")
    }

    @Test("the leader SIGKILLed mid-run: the follower takes over and the card ends as one instance's does")
    func killedLeader() async throws {
        let events = CrashRecoveryTests.events()
        let expected = try #require(try await CrashRecoveryTests.replay(events, killAfter: []).1)

        let fake = try FakePushWardServer()
        let directory = try ScratchDirectory()
        let uri = try await PostgresServer.makeSharedDatabase()
        let config = try Self.writeConfig(directory: directory.url.path, fake: fake, uri: uri)
        let first = try Serve(configPath: config, log: directory.path("first.log"))
        let lead = try await Self.leader(uri)
        #expect(lead.pid == first.process.processIdentifier, "the first instance up leads")
        let second = try Serve(configPath: config, log: directory.path("second.log"))
        defer { _ = second.terminate() }

        let half = events.count / 2
        var killedAt: UnixTime = 0
        for (index, event) in events.enumerated() {
            if index == half {
                first.kill()
                killedAt = Date().timeIntervalSince1970
            }
            // Spread over both while both run: the follower's deliveries wait for the leader.
            let port = index < half && index % 2 == 0 ? first.port : second.port
            let status = CrashRecoveryTests.post(event, id: "ha-\(index)", port: port)
            #expect(status == 202 || status == 200, "delivery \(index): \(String(describing: status))")
        }
        let takeover = try await Self.leader(uri, after: lead.epoch)
        #expect(takeover.pid == second.process.processIdentifier)
        let card = try await Self.endedCard(fake)
        #expect(card == expected)
        Self.expectOneEndAndOneFinal(fake, "killed leader")
        let firstAfterKill = fake.requests.first { $0.at >= killedAt }.map { $0.at - killedAt }
        let failover = try #require(firstAfterKill, "the new leader sent nothing")
        print("high availability: SIGKILL to the next PushWard request \(Int(failover * 1_000)) ms")
        #expect(second.terminate() == 0)
    }

    @Test("the leader SIGSTOPped mid-run loses the lead; resumed, it steps down and sends nothing")
    func frozenLeader() async throws {
        let events = CrashRecoveryTests.events()
        let expected = try #require(try await CrashRecoveryTests.replay(events, killAfter: []).1)

        let fake = try FakePushWardServer()
        let directory = try ScratchDirectory()
        let uri = try await PostgresServer.makeSharedDatabase()
        let config = try Self.writeConfig(directory: directory.url.path, fake: fake, uri: uri)
        let first = try Serve(configPath: config, log: directory.path("first.log"))
        let lead = try await Self.leader(uri)
        #expect(lead.pid == first.process.processIdentifier)
        let second = try Serve(configPath: config, log: directory.path("second.log"))

        let half = events.count / 2
        var stoppedAt = Date()
        for (index, event) in events.enumerated() {
            if index == half {
                kill(first.process.processIdentifier, SIGSTOP)
                stoppedAt = Date()
            }
            let port = index < half && index % 2 == 0 ? first.port : second.port
            let status = CrashRecoveryTests.post(event, id: "ha-\(index)", port: port)
            #expect(status == 202 || status == 200, "delivery \(index): \(String(describing: status))")
        }
        let takeover = try await Self.leader(uri, after: lead.epoch)
        #expect(takeover.pid == second.process.processIdentifier)
        print(
            "high availability: SIGSTOP to the lead taken over \(Int(Date().timeIntervalSince(stoppedAt) * 1_000)) ms")
        let card = try await Self.endedCard(fake)
        #expect(card == expected)

        // Resumed, the old leader finds its lead gone before it starts anything.
        let before = fake.requests.count
        kill(first.process.processIdentifier, SIGCONT)
        try await Task.sleep(for: .seconds(3))
        #expect(fake.requests.count == before, "the resumed leader sent \(fake.requests.count - before) requests")
        Self.expectOneEndAndOneFinal(fake, "frozen leader")
        // Its sessions were ended while it was frozen: it opens new ones and takes deliveries
        // again, now as a follower (a redelivery is a duplicate). The first may meet the ended
        // session and get a 503, which GitHub redelivers.
        var statuses: [Int?] = []
        for _ in 0..<3 where statuses.last != 200 {
            statuses.append(CrashRecoveryTests.post(events[0], id: "ha-0", port: first.port))
        }
        #expect(statuses.last == 200, "after resuming: \(statuses)")
        // Both answer reads from the shared database; each says whether it leads.
        for (instance, leads) in [(first, false), (second, true)] {
            let metrics = try await Self.admin("/metrics", port: instance.adminPort) ?? ""
            #expect(metrics.contains("pushward_bridge_leader \(leads ? 1 : 0)\n"), "\(leads)")
            let runs = try await Self.admin("/api/runs", port: instance.adminPort) ?? ""
            #expect(runs.contains("9000"), "\(leads): \(runs.prefix(300))")
            // The status page too, saying which instance leads: the second, by its process id.
            let page = try await Self.admin("/", port: instance.adminPort) ?? ""
            #expect(page.contains("data-role=\"\(leads ? "leader" : "follower")\""), "\(leads)")
            #expect(page.contains(":\(second.process.processIdentifier)</span> (epoch"), "\(leads)")
            #expect(page.contains("id=\"run-9000-"), "\(leads): the run is drawn")
        }
        #expect(first.terminate() == 0)
        #expect(second.terminate() == 0)
    }
}
