import BridgeCore

/// The leadership row of a shared (PostgreSQL) database: which instance leads, under which epoch,
/// since when, and its last heartbeat.
public struct LeaderRecord: Sendable, Equatable {
    /// `host:pid` of the instance that took the lead.
    public var holder: String
    public var epoch: Int64
    public var since: UnixTime
    public var heartbeatAt: UnixTime

    public init(holder: String, epoch: Int64, since: UnixTime, heartbeatAt: UnixTime) {
        self.holder = holder
        self.epoch = epoch
        self.since = since
        self.heartbeatAt = heartbeatAt
    }
}
