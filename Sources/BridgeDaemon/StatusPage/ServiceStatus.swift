import BridgeCore
import BridgeStore
import Foundation

/// What `/metrics` and the status page read of the running daemon without entering the service's
/// queue: the snapshot the service last published (`Publishing`), recovery's board, the leadership
/// board, the WAL checkpointer and the database's size. Built by the daemon with the same boards
/// it hands the service, recovery and the leadership loop.
public struct ServiceStatus: Sendable {
    let configuration: BridgeConfiguration
    let snapshots: ServiceSnapshot.Board
    /// What recovery from GitHub last did (`GitHubRecovery`).
    public let recovery: RecoveryBoard
    /// Whether this instance leads (several instances); nil on SQLite, whose one instance leads.
    let leadership: LeadershipBoard?
    /// Checkpoints the WAL on its own thread; nil on PostgreSQL, which checkpoints by itself.
    let checkpointer: WALCheckpointer?
    let databasePath: String
    /// Deliveries received and not answered yet.
    let deliveriesWaiting: @Sendable () -> Int

    /// The status of `service`, with the boards the daemon built it with.
    init(
        service: BridgeService, snapshots: ServiceSnapshot.Board, recovery: RecoveryBoard,
        leadership: LeadershipBoard?, checkpointer: WALCheckpointer?, databasePath: String
    ) {
        configuration = service.settings.configuration
        self.snapshots = snapshots
        self.recovery = recovery
        self.leadership = leadership
        self.checkpointer = checkpointer
        self.databasePath = databasePath
        deliveriesWaiting = { service.deliveriesWaiting }
    }

    /// What the status page says above the runs: a refusal a maintainer has to act on, and the
    /// pacer holding requests back.
    func notices() -> [String] {
        let snapshot = snapshots.snapshot
        let pacing = snapshot.pacerNotice(at: Date().timeIntervalSince1970).map { [$0] } ?? []
        guard let refused = snapshot.gate.targetsRefusedAt, configuration.routing.isEnabled else {
            return pacing
        }
        return pacing + [
            "PushWard refused a routing target at \(GitHubTimestamp.format(refused)): the API key is a personal one, "
                + "which cannot route. Cards and alerts go to everyone the key reaches; use an organisation key "
                + "for routing to take effect."
        ]
    }

    /// The budget as the planner sees it, and the level it chose last (for the status page), as of
    /// the last published snapshot.
    func budgetStanding() -> (budget: PushBudget?, levelInForce: Fidelity?) {
        let snapshot = snapshots.snapshot
        return (snapshot.budget, snapshot.levelInForce)
    }

    /// Gauges read at scrape time: runs and cards in flight, the gate, the budget, the database's
    /// size. Never waits on the service's queue (see `ServiceSnapshot`).
    func gauges(at now: UnixTime) -> [ServiceSnapshot.Gauge] {
        snapshots.snapshot.gauges(
            at: now, deliveriesWaiting: deliveriesWaiting(), databaseBytes: databaseBytes(),
            wal: checkpointer?.snapshot())
            + (configuration.githubAPI == nil ? [] : recovery.gauges()) + (leadership?.gauges(at: now) ?? [])
    }

    /// The database file and its WAL, in bytes, as the file system says now (0 for what it does
    /// not know: a PostgreSQL URI).
    private func databaseBytes() -> Double {
        var size = 0.0
        for suffix in ["", "-wal"] {
            let attributes = try? FileManager.default.attributesOfItem(atPath: databasePath + suffix)
            size += Double((attributes?[.size] as? NSNumber)?.int64Value ?? 0)
        }
        return size
    }
}
