import BridgeStore
import Foundation

/// What `/metrics`, the status page and the loops read without entering the service's queue: the
/// published snapshot, recovery's progress, the leader fence (and with it the leadership board),
/// and the WAL checkpointer's progress and the database's size.
struct ServiceBoards: Sendable {
    /// The service's state as last published (`ServiceSnapshot`, `Publishing`).
    let snapshots: ServiceSnapshot.Board
    /// What recovery from GitHub last did (`GitHubRecovery`).
    let recovery = RecoveryBoard()
    /// Whether a leader-only request may go out now (`LeaderFence`).
    let leaderFence: LeaderFence
    /// Checkpoints the WAL on its own thread; nil on PostgreSQL, which checkpoints by itself.
    let checkpointer: WALCheckpointer?
    private let databasePath: String

    init(snapshot: ServiceSnapshot, leadership: LeadershipBoard?, checkpointer: WALCheckpointer?, databasePath: String)
    {
        snapshots = ServiceSnapshot.Board(snapshot)
        leaderFence = LeaderFence(board: leadership)
        self.checkpointer = checkpointer
        self.databasePath = databasePath
    }

    /// The database file and its WAL, in bytes, as the file system says now (0 for what it does
    /// not know: a PostgreSQL URI).
    func databaseBytes() -> Double {
        var size = 0.0
        for suffix in ["", "-wal"] {
            let attributes = try? FileManager.default.attributesOfItem(atPath: databasePath + suffix)
            size += Double((attributes?[.size] as? NSNumber)?.int64Value ?? 0)
        }
        return size
    }
}
