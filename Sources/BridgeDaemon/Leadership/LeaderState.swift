import BridgeCore
import BridgeStore
import Foundation

/// Where this instance stands as the leader, as the service last heard it from the leadership
/// loop, and the one rule for whether leader-only work may go now (`allows`).
///
/// Three kinds of work ask, and they differ only in what they may trust:
/// - a write of the leader's (`.write`: applying a delivery, pruning, forgetting finished runs)
///   is fenced again by the epoch inside its transaction (`fence`), so the epoch the service last
///   heard suffices;
/// - work the service plans on its queue that leaves the process (`.start`: the requests, alerts
///   and widget updates due, the preempted check) cannot be fenced by the database, so it also
///   needs the lease valid by the clock now under that same epoch (a leader resumed after a freeze
///   starts nothing before its next heartbeat);
/// - a request about to leave, asked off the service's queue (`.send`: the dispatcher's gate,
///   recovery's GitHub calls, `LeaderFence.permits`), has only the clock's answer.
///
/// On SQLite there is no board and one instance, which always leads: everything is allowed.
struct LeaderState: Sendable {
    /// What is asked to go; see the type's description.
    enum Work: Sendable, CaseIterable {
        case write
        case start
        case send
    }

    /// The one rule. `shared`: several instances on one PostgreSQL database. `heard`: the epoch
    /// the service took the lead under (nil while following). `trusted`: the epoch the lease is
    /// valid under by the clock now (read only when the work needs it).
    static func allows(
        _ work: Work, shared: Bool, heard: Int64?, trusted: @autoclosure () -> Int64?
    ) -> Bool {
        guard shared else { return true }
        switch work {
        case .write: return heard != nil
        case .start: return heard != nil && trusted() == heard
        case .send: return trusted() != nil
        }
    }

    /// The clock's half of the rule, shared with the threads off the service's queue.
    let fence: LeaderFence
    /// The epoch this instance leads under, as the service last heard it; nil while following.
    private(set) var epoch: Int64?
    /// Cards a previous leader claimed, with when their claims end: left alone until then.
    private(set) var claimedElsewhere: [String: UnixTime] = [:]

    init(fence: LeaderFence) {
        self.fence = fence
    }

    /// Whether several instances share the database (PostgreSQL): only then is there a lead to
    /// hold, a fence to write under and cards to claim.
    var isShared: Bool { fence.board != nil }

    /// Whether `work` may go now, by `allows`.
    func allows(_ work: Work) -> Bool {
        Self.allows(work, shared: isShared, heard: epoch, trusted: fence.trustedEpoch())
    }

    /// The epoch claims and their releases are written under: nil on SQLite, where nothing is
    /// claimed, and while following.
    var claimEpoch: Int64? { isShared ? epoch : nil }

    /// Fails the caller's transaction with `LeadLost` when the database says another instance
    /// leads (or this one heard it lost the lead). Nothing on SQLite.
    func fence(_ database: BridgeDatabase) throws {
        guard isShared else { return }
        guard let epoch, try database.holdsLead(epoch: epoch) else { throw LeadLost() }
    }

    /// Takes the lead under `epoch`; false (nothing changed) when it already led under it.
    mutating func take(_ epoch: Int64) -> Bool {
        guard self.epoch != epoch else { return false }
        self.epoch = epoch
        return true
    }

    /// The cards a previous leader's claims still cover, with when each claim ends: what a new
    /// leader waits out before it sends for them.
    mutating func waitOut(_ claims: [String: UnixTime]) {
        claimedElsewhere = claims
    }

    /// Gives the lead up; false when it was not held.
    mutating func stepDown() -> Bool {
        guard epoch != nil else { return false }
        epoch = nil
        claimedElsewhere = [:]
        return true
    }

    /// The cards whose claims ended by `now`, no longer held: the engine looks at them again.
    mutating func endClaims(at now: UnixTime) -> [String] {
        guard !claimedElsewhere.isEmpty else { return [] }
        let ended = claimedElsewhere.filter { $0.value <= now }.keys
        for slug in ended { claimedElsewhere[slug] = nil }
        return Array(ended)
    }

    /// When the earliest claim still held ends: the dispatcher wakes then.
    var nextClaimEnd: UnixTime? { claimedElsewhere.values.min() }

    /// How long a claim on a card lasts: longer than a PushWard request may take
    /// (`sharedRequestTimeout`), so a request still out when its leader was deposed has ended
    /// before another is sent. Bounds the failover of the one card whose request was out.
    static let claimDuration: UnixTime = 5
    /// The PushWard client's timeout when several instances share the database: shorter than a
    /// single instance's 10 s, so a claimed card waits at most `claimDuration` after a failover.
    static let sharedRequestTimeout: Double = 4

    /// Claims `slugs` in the turn that plans their requests, so they are committed before any is
    /// sent. Nothing to claim on SQLite.
    func claim(_ slugs: [String], in turn: borrowing ServiceTurn) throws {
        guard isShared, !slugs.isEmpty else { return }
        try turn.database.claimCards(slugs, epoch: epoch ?? 0, until: turn.now + Self.claimDuration)
    }

    /// On taking the lead under `epoch`: the previous leader's claims, read from `database`, are
    /// waited out (when they cannot be read, a claim's duration for every card in `cards`), and
    /// the lead is said.
    mutating func waitOutClaims(
        of epoch: Int64, in database: BridgeDatabase, cards: some Sequence<String>, log: Logger
    ) {
        let now = Date().timeIntervalSince1970
        do {
            waitOut(try database.cardsClaimedElsewhere(epoch: epoch, at: now))
        } catch {
            log.warning(
                "could not read the previous leader's claims; waiting out a claim's duration",
                ["error": .string("\(error)")])
            waitOut(Dictionary(uniqueKeysWithValues: cards.map { ($0, now + Self.claimDuration) }))
        }
        log.notice(
            "leading: applying deliveries and sending to PushWard",
            [
                "leader.epoch": .number(Double(epoch)),
                "leader.claims_waited": .number(Double(claimedElsewhere.count)),
            ])
    }
}
