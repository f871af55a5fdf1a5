import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// `LeaderLease` against a real PostgreSQL: one of several instances leads, a clean stop hands the
/// lead over at once, a killed or frozen leader loses it, every takeover bumps the epoch, and a
/// leader stops trusting its lead before the server could have ended it.
@Suite struct LeaderLeaseTests {
    let uri: String

    init() throws {
        uri = try PostgresServer.shared().makeDatabase()
        try PostgresMigrationRunner.migrate(try PostgresConnection(uri: uri), PostgresSchema.migrations)
    }

    private func leadership() throws -> (epoch: Int64?, holder: String?) {
        let db = try PostgresConnection(uri: uri)
        return try db.queryOne("SELECT epoch, holder FROM leadership") { ($0.int64(0), $0.string(1)) } ?? (nil, nil)
    }

    @Test func oneOfTwoLeadsAndACleanStopHandsOverAtOnce() throws {
        let first = LeaderLease(uri: uri, holder: "host-a:101")
        let second = LeaderLease(uri: uri, holder: "host-b:202")
        defer {
            first.close()
            second.close()
        }
        #expect(try first.poll() == .leading(epoch: 1))
        #expect(try second.poll() == .following)
        #expect(try first.poll() == .leading(epoch: 1))
        #expect(try second.poll() == .following)
        #expect(first.isTrusted())
        #expect(!second.isTrusted())
        #expect(try leadership() == (1, "host-a:101"))

        first.stepDown()
        #expect(!first.isTrusted())
        #expect(try second.poll() == .leading(epoch: 2))
        #expect(try first.poll() == .following)
        #expect(try leadership() == (2, "host-b:202"))
    }

    @Test func aKilledLeadersSessionEndsItsLeadAndItsSuccessorBumpsTheEpoch() throws {
        let first = LeaderLease(uri: uri, holder: "host-a:101")
        let second = LeaderLease(uri: uri, holder: "host-b:202")
        defer {
            first.close()
            second.close()
        }
        #expect(try first.poll() == .leading(epoch: 1))
        #expect(try second.poll() == .following)
        // What the server does when the leader's process dies: its session ends.
        let admin = try PostgresConnection(uri: uri)
        let pid = try #require(first.backendPID)
        #expect(try admin.queryOne("SELECT pg_terminate_backend($1)", [.int(Int(pid))]) { $0.bool(0) } == true)
        try waitUntil { try second.poll() == .leading(epoch: 2) }

        // The old leader finds out at its next heartbeat, and from then on follows.
        #expect(throws: PostgresError.self) { try first.poll() }
        #expect(first.role == .following)
        #expect(!first.isTrusted())
        #expect(try first.poll() == .following)
        #expect(try leadership().epoch == 2)
    }

    @Test func aFrozenLeaderLosesTheLeadAfterTheSessionTimeoutAndStopsTrustingItFirst() throws {
        let settings = LeaderLease.Settings(sessionTimeout: .milliseconds(600), pollInterval: .milliseconds(100))
        let frozen = LeaderLease(uri: uri, holder: "host-a:101", settings: settings)
        let standby = LeaderLease(uri: uri, holder: "host-b:202", settings: settings)
        defer {
            frozen.close()
            standby.close()
        }
        let confirmed = ContinuousClock.now
        #expect(try frozen.poll(at: confirmed) == .leading(epoch: 1))
        // Not one statement from the leader now, as under SIGSTOP; the standby keeps polling.
        let started = ContinuousClock.now
        try waitUntil(seconds: 5) { try standby.poll() == .leading(epoch: 2) }
        let lost = ContinuousClock.now - started
        #expect(lost >= .milliseconds(500))
        #expect(!frozen.isTrusted())

        // On resuming, the frozen leader's heartbeat fails and a write under its epoch changes nothing.
        #expect(throws: PostgresError.self) { try frozen.poll() }
        #expect(frozen.role == .following)
        let db = try PostgresConnection(uri: uri)
        #expect(try db.run("UPDATE leadership SET holder = 'stale' WHERE epoch = $1", [.integer(1)]) == 0)
        #expect(try leadership() == (2, "host-b:202"))
    }

    @Test func trustEndsTwoPollsBeforeTheSessionTimeout() throws {
        let settings = LeaderLease.Settings(sessionTimeout: .seconds(3), pollInterval: .milliseconds(500))
        #expect(settings.trusted == .seconds(2))
        let lease = LeaderLease(uri: uri, holder: "host-a:101", settings: settings)
        defer { lease.close() }
        let confirmed = ContinuousClock.now
        #expect(try lease.poll(at: confirmed) == .leading(epoch: 1))
        #expect(lease.isTrusted(at: confirmed + .milliseconds(1999)))
        #expect(!lease.isTrusted(at: confirmed + .seconds(2)))
        // A heartbeat renews it.
        #expect(try lease.poll(at: confirmed + .seconds(2)) == .leading(epoch: 1))
        #expect(lease.isTrusted(at: confirmed + .milliseconds(3999)))
    }

    @Test func aLeaderWhoseEpochWasTakenStepsDownAtItsHeartbeat() throws {
        let lease = LeaderLease(uri: uri, holder: "host-a:101")
        defer { lease.close() }
        #expect(try lease.poll() == .leading(epoch: 1))
        // As if another instance had taken over behind a session this one did not know it lost.
        try PostgresConnection(uri: uri).run("UPDATE leadership SET epoch = 2, holder = 'host-b:202'")
        #expect(try lease.poll() == .following)
        #expect(!lease.isTrusted())
        // Its lock went with it: it can take the lead again, under a new epoch.
        #expect(try lease.poll() == .leading(epoch: 3))
    }

    private func waitUntil(seconds: Double = 5, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        Issue.record("condition not met within \(seconds) s")
    }
}
