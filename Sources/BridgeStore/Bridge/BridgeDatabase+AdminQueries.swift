import BridgeCore
import Foundation

/// Reads for the admin listener's status page, which shows many runs at once and so asks for
/// one attempt at a time rather than every attempt of a run id.
extension BridgeDatabase {
    /// One run attempt as stored; nil when it was never recorded (or retention removed it).
    public func storedRun(_ key: RunKey) throws -> StoredRun? {
        try connection.queryOne(
            "SELECT state, slug, released, updated_at FROM runs WHERE repository = ? AND run_id = ? AND attempt = ?",
            [.text(key.repository), .integer(Int64(key.runID)), .integer(Int64(key.attempt))]
        ) { row in
            StoredRun(
                state: try decode(RunState.self, row.string(0) ?? ""), slug: row.string(1) ?? "",
                released: row.int(2) == 1, updatedAt: row.double(3) ?? 0)
        }
    }
}
