import BridgeCore
import BridgeDaemon
import BridgeStore
import Foundation
import Testing

/// The status page of an instance among several on one PostgreSQL database: it says whether this
/// instance leads and, on a follower, which one does, with the holder (a host name the operator
/// set) escaped like any other text, and calls out a leader whose heartbeat stopped.
@Suite("Status page: leadership")
struct StatusPageLeadershipTests {
    static let now: UnixTime = 1_780_000_000

    static func page(leads: Bool, holder: String = "bridge-a:4242", heartbeatAgo: Double = 0.4) -> String {
        var snapshot = StatusSnapshot(runs: [], takenAt: now)
        snapshot.leadership = .init(
            leads: leads,
            leader: LeaderRecord(holder: holder, epoch: 7, since: now - 3_600, heartbeatAt: now - heartbeatAgo))
        return StatusPage.render(snapshot)
    }

    @Test("a follower names the leader and says it sends; a leader says it leads")
    func roles() {
        let follower = Self.page(leads: false)
        #expect(follower.contains("data-role=\"follower\""))
        #expect(follower.contains("<span id=\"leader\">bridge-a:4242</span> (epoch 7, leading since"))
        #expect(follower.contains("sends to PushWard and sweeps GitHub"))
        #expect(!follower.contains("No heartbeat"))

        let leader = Self.page(leads: true)
        #expect(leader.contains("data-role=\"leader\""))
        #expect(leader.contains("This instance leads: <span id=\"leader\">bridge-a:4242</span>"))
        #expect(!leader.contains("This instance follows"))
    }

    @Test("a leader whose heartbeat stopped is called out on a follower")
    func staleHeartbeat() {
        let page = Self.page(leads: false, heartbeatAgo: 42)
        #expect(page.contains("No heartbeat from the leader for 42 s"))
        #expect(page.contains("role=\"alert\""))
    }

    @Test("before any instance led, a follower says so")
    func nobodyLeads() {
        var snapshot = StatusSnapshot(runs: [], takenAt: Self.now)
        snapshot.leadership = .init(leads: false, leader: nil)
        #expect(StatusPage.render(snapshot).contains("No instance has taken the lead yet."))
    }

    @Test("one instance on SQLite has no leadership section")
    func sqlite() {
        #expect(!StatusPage.render(StatusSnapshot(runs: [], takenAt: Self.now)).contains("id=\"leadership\""))
    }

    @Test("a hostile holder stays text", arguments: HostileInput.strings.map(\.text))
    func hostileHolder(_ holder: String) {
        let page = Self.page(leads: false, holder: holder)
        let scanner = MarkupScanner(page)
        #expect(scanner.problems.isEmpty, "\(scanner.problems)")
        #expect(!page.contains(holder) || !holder.contains(where: { "<>\"'&".contains($0) }))
    }
}
