import BridgeCore
import Foundation

/// What recovery last did, for `/metrics` and the status page, read without waiting for a sweep:
/// when each hook was last swept and how, GitHub's rate limit as last reported, the problem that
/// stops recovery (a refused credential, a missing permission), if any.
public final class RecoveryBoard: @unchecked Sendable {
    public struct Standing: Sendable, Equatable {
        public var lastSweepAt: UnixTime?
        /// Redeliveries asked for since the start, and deliveries given up on.
        public var redeliveriesRequested = 0
        public var givenUp = 0
        public var runsLookedUp = 0
        public var rateLimitRemaining: Int?
        public var rateLimitLimit: Int?
        /// What stops recovery now, in words a person can act on; nil while it works.
        public var problem: String?
        /// The hooks found by their URL (`github.api.hooks` left out), as configured names.
        public var discoveredHooks: [String] = []
    }

    private let lock = NSLock()
    private var standing = Standing()

    public init() {}

    public var current: Standing { lock.withLock { standing } }

    func update(_ change: (inout Standing) -> Void) {
        lock.withLock { change(&standing) }
    }

    /// Sets what stops recovery (nil: nothing); true when that changed, so it is said once.
    func setProblem(_ problem: String?) -> Bool {
        lock.withLock {
            defer { standing.problem = problem }
            return standing.problem != problem
        }
    }

    /// The recovery gauges (only with `github.api` configured: a zero would claim it runs).
    func gauges() -> [ServiceSnapshot.Gauge] {
        let standing = current
        return [
            (
                "github_last_sweep_timestamp_seconds", "When the hooks' delivery logs were last swept (0: not yet).",
                [:], standing.lastSweepAt ?? 0
            ),
            (
                "github_rate_limit_remaining", "GitHub API requests left this hour, as GitHub last said (-1: unknown).",
                [:], standing.rateLimitRemaining.map(Double.init) ?? -1
            ),
            (
                "github_recovery_blocked", "1 while a refused credential or a missing permission stops recovery.",
                [:], standing.problem == nil ? 0 : 1
            ),
        ]
    }
}
