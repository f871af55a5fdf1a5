import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import HTTPClientSupport
import PushWardClient
import Synchronization
import Testing

/// A leader that loses its lead between planning a request and writing it (frozen by SIGSTOP or a
/// stalled VM while the request waited for its connection) must not send it: another instance may
/// have sent newer frames meanwhile, and an old `ongoing` frame after the new leader's end starts the
/// Live Activity again on every phone. `HighAvailabilityTests` freezes a real process, which hits
/// that instant only by chance; here the instant is made on purpose, in process, so the test fails
/// whenever the dispatcher's request goes out without its gate being asked as the body is written.
@Suite("A lead lost mid-request", .serialized, .timeLimit(.minutes(2)))
struct LeadLapseTests {
    /// The real PushWard client to the fake, except that before the card's first PATCH it waits,
    /// as a process frozen there would, for `lapse` to take the lead away; the request then goes on
    /// with its gate.
    final class FreezingTransport: PushWardTransport {
        let inner: HTTPTransport
        let lapse: @Sendable () async -> Void
        private let froze = Atomic<Bool>(false)
        private let withheldCount = Atomic<Int>(0)

        init(fake: FakePushWardServer, lapse: @escaping @Sendable () async -> Void) {
            inner = HTTPTransport(
                client: PushWardClient(
                    configuration: .init(baseURL: fake.baseURL, apiKey: fake.apiKey, timeout: 4, version: "test")))
            self.lapse = lapse
        }

        var isDryRun: Bool { false }
        /// Requests whose gate refused them.
        var withheld: Int { withheldCount.load(ordering: .acquiring) }

        func send(_ request: PushWardRequest, gate: SendGate?) async -> PushWardAnswer {
            if request.method == .patch, !froze.exchange(true, ordering: .acquiringAndReleasing) { await lapse() }
            let answer = await inner.send(request, gate: gate)
            if gate?.refused == true { withheldCount.add(1, ordering: .acquiringAndReleasing) }
            return answer
        }

        func usage(gate: SendGate?) async -> PushWardUsageAnswer { await inner.usage(gate: gate) }
    }

    /// Takes the lead away from the instance on `uri` and keeps it: a test session queues for the
    /// lead's advisory lock, then the leader's lease session is ended, so the lock passes to the
    /// test and the instance cannot take it back until `release`.
    final class LeadThief: @unchecked Sendable {
        let uri: String
        private var holder: PostgresConnection?

        init(uri: String) { self.uri = uri }

        func steal() async throws {
            let holder = try PostgresConnection(uri: uri, applicationName: "lead lapse test")
            self.holder = holder
            nonisolated(unsafe) let queued = holder
            async let taken: Void = offPool {
                _ = try queued.query("SELECT pg_advisory_lock($1::bigint)", [.integer(LeaderLease.lockKey)]) { _ in () }
            }
            let uri = uri
            try await offPool {
                let admin = try PostgresConnection(uri: uri, applicationName: "lead lapse admin")
                defer { admin.close() }
                // This test's database only: other suites run their daemons on the same server.
                let waiting = """
                    SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    """
                let deadline = Date().addingTimeInterval(10)
                while try admin.queryOne(waiting, [], { $0.int64(0) ?? 0 }) != 1, Date() < deadline {
                    Thread.sleep(forTimeInterval: 0.02)
                }
                try admin.run(
                    """
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE application_name = $1 AND datname = current_database()
                    """,
                    [.text("pushward-bridge leader lease")])
            }
            try await taken
        }

        func release() {
            holder?.close()
            holder = nil
        }
    }

    @Test("the lead lost while the card's request waits: the request is withheld, and sent again once led")
    func withheldWhileLapsed() async throws {
        let fake = try FakePushWardServer()
        let uri = try await PostgresServer.makeSharedDatabase()
        let thief = LeadThief(uri: uri)
        let lapsedAt = Mutex<Double?>(nil)
        let ports = Mutex<Int?>(nil)
        let transport = FreezingTransport(fake: fake) {
            guard let adminPort = ports.withLock({ $0 }) else { return }
            do {
                try await thief.steal()
                lapsedAt.withLock { $0 = Date().timeIntervalSince1970 }
                // As a resumed process finds it: its heartbeat failed, it no longer leads.
                _ = await HighAvailabilityRecoveryTests.within(15) {
                    let metrics = (try? await AlertEndToEndTests.get("/metrics", port: adminPort)) ?? ""
                    return metrics.contains("pushward_bridge_leader 0\n")
                }
            } catch {
                Issue.record("could not take the lead away: \(error)")
            }
        }
        let daemon = try await RunningDaemon.start(TestConfiguration(database: uri), transport: transport)
        defer { Task { try? await daemon.stop() } }
        ports.withLock { $0 = daemon.daemon.adminPort }
        #expect(
            await HighAvailabilityRecoveryTests.within(15) {
                let metrics = (try? await AlertEndToEndTests.get("/metrics", port: daemon.daemon.adminPort)) ?? ""
                return metrics.contains("pushward_bridge_leader 1\n")
            })

        let script = RunScript(start: Date().timeIntervalSince1970 - 600)
        let events = script.deliveries(waves: [
            [RunScript.Job("lint \u{202E}txt.exe", duration: 20)], [RunScript.Job("test 🧪", duration: 30)],
        ])
        for (index, event) in events.enumerated() {
            let (name, body) = PayloadEncoder.encode(event)
            #expect(try await daemon.deliver(event: name, id: "lapse-\(index)", body: body).status == 202)
        }

        // The PATCH waited for the lapse, was refused as its body went out, and nothing reached
        // PushWard while another session held the lead.
        #expect(await HighAvailabilityRecoveryTests.within(20) { transport.withheld == 1 }, "the PATCH was withheld")
        let lapseStart = try #require(lapsedAt.withLock { $0 })
        try await Task.sleep(for: .seconds(1))
        let released = Date().timeIntervalSince1970
        #expect(fake.requests.filter { $0.at >= lapseStart }.isEmpty, "\(fake.requests.map { ($0.method, $0.at) })")
        thief.release()

        // Led again (a new epoch), the instance reads the card from the store and sends it on.
        let ended = await HighAvailabilityRecoveryTests.within(30) {
            fake.requests.contains { $0.method == "PATCH" && $0.body?["state"] == "ended" }
        }
        #expect(ended, "the card ended after the lead came back")
        #expect(fake.requests.contains { $0.method == "PATCH" && $0.at >= released })
        HighAvailabilityTests.expectOneEndAndOneFinal(fake, "lead lapse")
        #expect(transport.withheld == 1)
    }
}
