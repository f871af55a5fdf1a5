import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeDaemon

/// `LeaderState`: the one rule for whether leader-only work may go, and the standing it is asked
/// of (the epoch heard, the previous leader's claims).
@Suite("The leader's standing and its rule")
struct LeaderStateTests {
    /// Every state the rule can be asked in, and its answer for each kind of work. A write trusts
    /// the epoch heard (the database fences it again); a start on the queue needs that epoch still
    /// valid by the clock; a send off the queue has only the clock.
    static let table: [(shared: Bool, heard: Int64?, trusted: Int64?, write: Bool, start: Bool, send: Bool)] = [
        // SQLite: one instance, always the leader, whatever else is said.
        (false, nil, nil, true, true, true),
        (false, 3, nil, true, true, true),
        (false, nil, 3, true, true, true),
        // PostgreSQL, following: nothing goes.
        (true, nil, nil, false, false, false),
        // Heard leading, lease valid under the same epoch: everything goes.
        (true, 3, 3, true, true, true),
        // Heard leading, lease past its local expiry (frozen, not renewed): writes only, fenced.
        (true, 3, nil, true, false, false),
        // Heard leading under 3, the lease now valid under 4 (the service has not heard yet).
        (true, 3, 4, true, false, true),
        // The loop took the lead, the service has not heard it: a send may go, nothing planned.
        (true, nil, 4, false, false, true),
    ]

    @Test("the rule, for every state and every kind of work", arguments: 0..<table.count)
    func rule(_ row: Int) {
        let state = Self.table[row]
        let expected: [LeaderState.Work: Bool] = [.write: state.write, .start: state.start, .send: state.send]
        for work in LeaderState.Work.allCases {
            #expect(
                LeaderState.allows(work, shared: state.shared, heard: state.heard, trusted: state.trusted)
                    == expected[work], "row \(row), \(work)")
        }
    }

    @Test("a write never reads the clock: the lease's trust is asked only for starts and sends")
    func writeReadsNoClock() {
        var asked = 0
        let trusted: () -> Int64? = {
            asked += 1
            return 1
        }
        // Asked outside `#expect`, which would evaluate every argument itself to show them.
        let writes = LeaderState.allows(.write, shared: true, heard: 1, trusted: trusted())
        #expect(writes && asked == 0)
        let starts = LeaderState.allows(.start, shared: true, heard: 1, trusted: trusted())
        #expect(starts && asked == 1)
    }

    @Test("on a board the loop moves, the standing asks the fence's clock for starts, not for writes")
    func standingOnABoard() {
        let clock = LeaderFenceTests.StillClock()
        let board = LeadershipBoard()
        var state = LeaderState(fence: LeaderFence(board: board, clock: { clock.now }))
        #expect(state.isShared)
        #expect(!state.allows(.write) && !state.allows(.start) && !state.allows(.send))

        LeaderFenceTests.leading(board, epoch: 5, heartbeatAt: clock.now)
        #expect(state.allows(.send), "the loop leads: a send may go")
        #expect(!state.allows(.start), "the service has not heard it: nothing is planned")
        let took = state.take(5)
        #expect(took)
        let tookAgain = state.take(5)
        #expect(!tookAgain, "taken once")
        #expect(state.allows(.write) && state.allows(.start))
        #expect(state.claimEpoch == 5)

        clock.advance(LeaderLease.Settings().trusted)
        #expect(state.allows(.write), "the database fences a write")
        #expect(!state.allows(.start) && !state.allows(.send), "frozen past the lease: nothing leaves")

        let stepped = state.stepDown()
        #expect(stepped)
        let steppedAgain = state.stepDown()
        #expect(!steppedAgain, "already following")
        #expect(state.epoch == nil && state.claimEpoch == nil)
        #expect(!state.allows(.write))
    }

    @Test("the previous leader's claims: each ends at its time, the earliest end wakes, stepping down drops them")
    func claims() {
        let board = LeadershipBoard()
        var state = LeaderState(fence: LeaderFence(board: board))
        let took = state.take(2)
        #expect(took)
        state.waitOut(["a": 10, "b": 20, "c": 20])
        #expect(state.nextClaimEnd == 10)
        let none = state.endClaims(at: 9.9)
        #expect(none.isEmpty)
        let first = state.endClaims(at: 10)
        #expect(first == ["a"])
        #expect(Set(state.claimedElsewhere.keys) == ["b", "c"])
        #expect(state.nextClaimEnd == 20)
        let rest = state.endClaims(at: 25)
        #expect(Set(rest) == ["b", "c"])
        #expect(state.nextClaimEnd == nil)

        state.waitOut(["d": 30])
        let stepped = state.stepDown()
        #expect(stepped)
        #expect(state.claimedElsewhere.isEmpty, "a follower waits out no one's claims")
    }

    @Test("SQLite: the fence asks the database nothing, there is no epoch to claim under, and everything goes")
    func singleInstance() throws {
        let directory = try ScratchDirectory()
        let database = try BridgeDatabase(path: directory.path("bridge.sqlite"))
        let state = LeaderState(fence: LeaderFence(board: nil))
        #expect(!state.isShared)
        #expect(state.claimEpoch == nil)
        try database.write { try state.fence($0) }
        for work in LeaderState.Work.allCases { #expect(state.allows(work)) }
    }

    @Test("the fence's off-queue answer is the rule's answer for a send")
    func fenceAsksTheRule() {
        let clock = LeaderFenceTests.StillClock()
        let board = LeadershipBoard()
        let fence = LeaderFence(board: board, clock: { clock.now })
        for epoch in [nil, 9] as [Int64?] {
            if let epoch { LeaderFenceTests.leading(board, epoch: epoch, heartbeatAt: clock.now) }
            #expect(
                fence.permits()
                    == LeaderState.allows(.send, shared: true, heard: nil, trusted: fence.trustedEpoch()))
        }
        #expect(fence.permits())
    }
}
