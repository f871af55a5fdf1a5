import HTTPClientSupport

/// The one answer to "may this instance act as the leader now?", for everything that leaves the
/// process: each PushWard request (the dispatcher's sends, the budget and preempted reads) and
/// each GitHub call recovery makes asks it just before the request goes (`gate`), not once per
/// round of them.
///
/// "Now" is this clock's now against the lease's local expiry (`LeadershipBoard`'s
/// `trustedUntil`: the last confirming heartbeat's start plus `LeaderLease.Settings.trusted`),
/// not a flag the leadership loop sets: a process frozen (SIGSTOP, a stalled VM) past that
/// instant is refused on waking, before its loop has run again to renew or lose the lead.
///
/// What the database holds is fenced separately, by the epoch (`BridgeService.fence`): this
/// check is what keeps requests the database cannot fence from going out. On SQLite there is no
/// board and one instance, which always leads: everything is allowed and no gate is made.
public final class LeaderFence: Sendable {
    /// Where the leadership loop says this instance stands; nil on SQLite.
    public let board: LeadershipBoard?
    private let clock: @Sendable () -> ContinuousClock.Instant

    /// `clock` is injectable so a test can move past the lease's expiry without waiting.
    public init(board: LeadershipBoard?, clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.board = board
        self.clock = clock
    }

    /// The epoch this instance leads under, when its lease is still valid by the clock now; nil
    /// while it follows or once the lease ran out unrenewed. Nil on SQLite too: no epoch there.
    public func trustedEpoch() -> Int64? {
        board?.trustedEpoch(at: clock())
    }

    /// Whether a leader-only request may go out now: always on SQLite (`LeaderState.allows`,
    /// for a request asked off the service's queue).
    public func permits() -> Bool {
        LeaderState.allows(.send, shared: board != nil, heard: nil, trusted: trustedEpoch())
    }

    /// A gate asking `permits` each time, for a client to ask as late as it can (before the
    /// request starts, and again as a body is handed to the connection); nil on SQLite, where
    /// there is nothing to ask.
    public func gate() -> SendGate? {
        guard board != nil else { return nil }
        return SendGate { [self] in permits() }
    }
}
