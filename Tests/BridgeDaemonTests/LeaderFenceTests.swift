import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import GitHubClient
import HTTPClientSupport
import PushWardClient
import Synchronization
import Testing

@testable import BridgeDaemon

/// The leader fence (`LeaderFence`) on a clock the test moves: the lease's local expiry decides,
/// asked at the moment of asking, and both clients send nothing once it refuses.
@Suite("The leader fence")
struct LeaderFenceTests {
    /// A clock that stands still until the test moves it.
    final class StillClock: Sendable {
        private let instant: Mutex<ContinuousClock.Instant>
        init(_ start: ContinuousClock.Instant = .now) { instant = Mutex(start) }
        var now: ContinuousClock.Instant { instant.withLock { $0 } }
        func advance(_ duration: Duration) { instant.withLock { $0 += duration } }
    }

    /// A board leading under `epoch`, trusted for `LeaderLease.Settings().trusted` from `clock`'s now,
    /// as a heartbeat that began then leaves it.
    static func leading(_ board: LeadershipBoard, epoch: Int64, heartbeatAt instant: ContinuousClock.Instant) {
        board.update { standing in
            standing.epoch = epoch
            standing.since = 0
            standing.trustedUntil = instant + LeaderLease.Settings().trusted
        }
    }

    @Test("a lease past its local expiry refuses, before any heartbeat says so; a renewed one allows again")
    func expiryRefusesRenewalAllows() {
        let clock = StillClock()
        let board = LeadershipBoard()
        let fence = LeaderFence(board: board, clock: { clock.now })
        #expect(!fence.permits(), "following: refused")
        #expect(fence.trustedEpoch() == nil)

        Self.leading(board, epoch: 7, heartbeatAt: clock.now)
        #expect(fence.permits())
        #expect(fence.trustedEpoch() == 7)

        // Frozen past the expiry: the board still says epoch 7 (no loop ran to change it).
        clock.advance(LeaderLease.Settings().trusted)
        #expect(board.current.epoch == 7, "nothing updated the board")
        #expect(!fence.permits(), "the expiry, not the board's epoch, decides")
        #expect(fence.trustedEpoch() == nil)

        // The next heartbeat confirms the lead: allowed again, for as long as it lasts.
        Self.leading(board, epoch: 7, heartbeatAt: clock.now)
        #expect(fence.permits())
        clock.advance(.milliseconds(1_999))
        #expect(fence.permits())
        clock.advance(.milliseconds(1))
        #expect(!fence.permits())
    }

    @Test("a gate asks at each use, not when made: made while leading, it refuses once the lease ran out")
    func gateAsksAtUse() throws {
        let clock = StillClock()
        let board = LeadershipBoard()
        let fence = LeaderFence(board: board, clock: { clock.now })
        Self.leading(board, epoch: 3, heartbeatAt: clock.now)
        let gate = try #require(fence.gate())
        #expect(gate.allows())
        #expect(!gate.refused)
        clock.advance(.seconds(10))
        #expect(!gate.allows())
        #expect(gate.refused)
    }

    @Test("no board (SQLite, one instance): always allowed and no gate to ask")
    func singleInstance() {
        let fence = LeaderFence(board: nil, clock: { .now })
        #expect(fence.permits())
        #expect(fence.gate() == nil)
        #expect(fence.trustedEpoch() == nil)
    }

    /// Counts the budget reads a transport was asked for, and those its gate let go.
    final class BudgetTransport: PushWardTransport {
        private let asked = Atomic<Int>(0)
        private let sent = Atomic<Int>(0)
        var isDryRun: Bool { false }
        var reads: (asked: Int, sent: Int) { (asked.load(ordering: .acquiring), sent.load(ordering: .acquiring)) }

        func send(_ request: PushWardRequest, gate: SendGate?) async -> PushWardAnswer {
            .noAnswer(reason: "not used")
        }

        func usage(gate: SendGate?) async -> PushWardUsageAnswer {
            asked.add(1, ordering: .acquiringAndReleasing)
            guard gate?.allows() ?? true else { return .noAnswer(reason: "withheld") }
            sent.add(1, ordering: .acquiringAndReleasing)
            return .usage(.unlimited)
        }
    }

    @Test("an instance that does not lead reads no budget from PushWard, and says nothing of it")
    func followerReadsNoBudget() async throws {
        let uri = try await PostgresServer.makeSharedDatabase()
        let database = try BridgeDatabase(location: .postgresql(uri: uri))
        let lines = LineLog()
        let logger = Logger(label: "test", minimumLevel: .debug, sink: { lines.append($0) })
        let fence = LeaderFence(board: LeadershipBoard())
        let refresh = WakeupSignal()
        let service = BridgeService(
            database: database, engine: BridgeEngine(), configuration: BridgeConfiguration(), logger: logger,
            usageRefresh: refresh, fence: fence)
        let transport = BudgetTransport()
        let budgetReader = BudgetReader(
            service: service, transport: transport, refresh: refresh, fence: fence, logger: logger)
        let reader = Task { await budgetReader.run() }
        // A read asked twice: the second after the follower's wait, so the loop goes on refusing.
        let askedTwice = await DispatchEndToEndTests.eventually(timeout: 30) { transport.reads.asked >= 2 }
        reader.cancel()
        refresh.signal()
        await reader.value
        #expect(askedTwice, "asked again while following: \(transport.reads)")
        #expect(transport.reads.sent == 0, "a follower read the budget")
        #expect(!lines.all.contains { $0.contains("could not read the PushWard budget") }, "\(lines.all)")
    }

    @Test("a GitHub call whose gate refuses sends nothing: withheld, GET and POST")
    func githubWithheld() async throws {
        let github = try FakeGitHubAPI(secret: "fence-secret", credentials: .token("ghp_fence"))
        let client = GitHubAPIClient(baseURL: github.baseURL, credential: .token("ghp_fence"), version: "test")
        let refusing = SendGate { false }
        await #expect(throws: GitHubAPIClient.Failure.withheld) {
            try await client.run(repository: "acme/widgets", id: 1, attempt: 1, gate: refusing)
        }
        let hook = GitHubAPISettings.Hook.repository(owner: "acme", name: "widgets", id: 1)
        await #expect(throws: GitHubAPIClient.Failure.withheld) {
            try await client.redeliver(1_000, of: hook, gate: refusing)
        }
        await #expect(throws: GitHubAPIClient.Failure.withheld) {
            try await client.deliveries(of: hook, gate: refusing)
        }
        #expect(github.requests.isEmpty, "\(github.requests.map(\.path))")
        #expect(refusing.refused)
        // The same calls with a gate that allows reach the fake.
        _ = try await client.deliveries(of: hook, gate: SendGate { true })
        #expect(github.requests.count == 1)
    }

    @Test("a PushWard read whose gate refuses sends nothing")
    func pushwardWithheld() async throws {
        let fake = try FakePushWardServer()
        let client = PushWardClient(
            configuration: .init(baseURL: fake.baseURL, apiKey: fake.apiKey, timeout: 4, version: "test"))
        let refusing = SendGate { false }
        guard case .noAnswer = await client.usage(gate: refusing) else {
            Issue.record("a refused read was answered")
            return
        }
        #expect(await client.activitySlugs(state: "preempted", gate: refusing) == nil)
        #expect(fake.requests.isEmpty, "\(fake.requests.map(\.path))")
        guard case .usage = await client.usage(gate: SendGate { true }) else {
            Issue.record("an allowed read got no usage")
            return
        }
        #expect(fake.requests.count == 1)
    }
}
