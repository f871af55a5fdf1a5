import BridgeCore
import Foundation

/// A verified webhook request, as the ingress hands it to the service.
public struct IncomingDelivery: Sendable {
    /// `X-GitHub-Delivery`.
    public var id: String
    /// `X-GitHub-Event`.
    public var event: String
    /// `X-GitHub-Hook-ID`.
    public var hookID: String?
    public var contentType: String?
    public var body: Data
    public var receivedAt: UnixTime

    public init(id: String, event: String, hookID: String?, contentType: String?, body: Data, receivedAt: UnixTime) {
        self.id = id
        self.event = event
        self.hookID = hookID
        self.contentType = contentType
        self.body = body
        self.receivedAt = receivedAt
    }
}

/// The service's answer to a delivery: the HTTP status GitHub gets and a small JSON body.
public struct IngestResult: Sendable, Equatable {
    public var status: Int
    public var body: JSONValue

    public init(status: Int, body: JSONValue) {
        self.status = status
        self.body = body
    }
}
