import BridgeCore

/// The one seam to PushWard: sends a request, says what came back. The dispatcher never sees
/// URLSession; tests and dry-run mode put their own behind it.
public protocol PushWardTransport: Sendable {
    func send(_ request: PushWardRequest) async -> TransportResult
}

/// What came of one request.
public struct TransportResult: Sendable, Equatable {
    /// The HTTP status; nil when no answer came (connection refused, timeout).
    public var status: Int?
    /// A word for the push history: `acknowledged`, `dry-run`, `rejected`, `failed`.
    public var outcome: String
    /// The problem detail or the error, for maintainers.
    public var detail: String?

    public init(status: Int?, outcome: String, detail: String? = nil) {
        self.status = status
        self.outcome = outcome
        self.detail = detail
    }
}

/// Dry-run mode (no API key): every request is "acknowledged" at once, so cards move through
/// their lifecycle and the history shows exactly what would have been sent.
public struct DryRunTransport: PushWardTransport {
    public init() {}

    public func send(_ request: PushWardRequest) async -> TransportResult {
        TransportResult(status: request.method == .post ? 201 : 200, outcome: "dry-run")
    }
}
