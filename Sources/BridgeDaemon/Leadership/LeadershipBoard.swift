import Foundation

/// Where the leadership loop says this instance stands, read without waiting by the service (may
/// a request start now?) and by `/metrics` and the status page (who leads, since when).
///
/// On SQLite there is no board: one instance, always the leader.
public final class LeadershipBoard: @unchecked Sendable {
    public struct Standing: Sendable, Equatable {
        /// The epoch this instance leads under; nil while it follows.
        public var epoch: Int64?
        /// Wall-clock time this instance took the lead; nil while it follows.
        public var since: Double?
        /// Until when a request may start: the last confirming heartbeat's start plus
        /// `LeaderLease.Settings.trusted`. Past it, a leader (one resumed after a freeze, say) starts
        /// nothing until its next heartbeat says whether it still leads.
        public var trustedUntil: ContinuousClock.Instant?
    }

    private let lock = NSLock()
    private var standing = Standing()

    public init() {}

    public var current: Standing { lock.withLock { standing } }

    /// The epoch, when this instance leads and its lead is trusted at `now`.
    public func trustedEpoch(at now: ContinuousClock.Instant = .now) -> Int64? {
        lock.withLock {
            guard let epoch = standing.epoch, let until = standing.trustedUntil, now < until else { return nil }
            return epoch
        }
    }

    /// `pushward_bridge_leader` (1 on the leader, 0 elsewhere) and how long it has led.
    func gauges(at now: Double) -> [ServiceSnapshot.Gauge] {
        let standing = current
        return [
            (
                "leader", "1 on the instance that leads (applies and sends), 0 on the others.", [:],
                standing.epoch == nil ? 0 : 1
            ),
            (
                "leader_since_seconds", "How long this instance has led (0 while it follows).", [:],
                standing.since.map { max(0, now - $0) } ?? 0
            ),
            (
                "leader_epoch", "The epoch this instance leads under (0 while it follows).", [:],
                Double(standing.epoch ?? 0)
            ),
        ]
    }

    func update(_ body: (inout Standing) -> Void) {
        lock.withLock { body(&standing) }
    }
}
