/// A `NOTIFY` another session sent on a channel this connection listens to.
public struct PostgresNotification: Sendable, Equatable {
    /// The channel, as named in `LISTEN`.
    public var channel: String
    /// The payload (empty when the sender gave none).
    public var payload: String
    /// The sending backend's process id (`pg_backend_pid()` of the sender).
    public var senderPID: Int32

    public init(channel: String, payload: String, senderPID: Int32) {
        self.channel = channel
        self.payload = payload
        self.senderPID = senderPID
    }
}
