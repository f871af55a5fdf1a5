import BridgeCore

/// One request the dispatcher sent (or, in dry-run mode, would have sent), and PushWard's answer.
public struct PushRecord: Sendable, Equatable {
    public var id: Int64?
    public var slug: String
    public var run: RunKey
    public var kind: String
    public var method: String
    public var path: String
    public var body: String
    public var sentAt: UnixTime
    /// The HTTP status; nil when no answer came (connection error, timeout) or in dry-run mode.
    public var status: Int?
    /// `acknowledged`, `dry-run`, `failed`, `rejected`, …
    public var outcome: String
    public var detail: String?

    public init(
        id: Int64? = nil, slug: String, run: RunKey, kind: String, method: String, path: String, body: String,
        sentAt: UnixTime, status: Int?, outcome: String, detail: String?
    ) {
        self.id = id
        self.slug = slug
        self.run = run
        self.kind = kind
        self.method = method
        self.path = path
        self.body = body
        self.sentAt = sentAt
        self.status = status
        self.outcome = outcome
        self.detail = detail
    }
}
