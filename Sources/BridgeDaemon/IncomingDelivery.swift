import BridgeCore
import BridgeStore
import Foundation

/// A verified webhook request, as the ingress hands it to the service.
///
/// It is decoded and its payload compressed where it is built, on the HTTP thread that received it:
/// both are pure and among the most expensive steps of a delivery, so doing them there spreads
/// them over every core instead of adding them to the store's one serial queue (make bench,
/// bench/README.md).
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
    /// The body decoded for `event`, or why it could not be.
    public var decoded: Result<WebhookEvent, WebhookDecodingError>
    /// The body as the store keeps it (compressed when smaller).
    public var storedPayload: PayloadCompression.Stored

    public init(id: String, event: String, hookID: String?, contentType: String?, body: Data, receivedAt: UnixTime) {
        self.id = id
        self.event = event
        self.hookID = hookID
        self.contentType = contentType
        self.body = body
        self.receivedAt = receivedAt
        self.decoded = Result { () throws(WebhookDecodingError) in
            try WebhookDecoder.decode(event: event, body: body, contentType: contentType)
        }
        self.storedPayload = PayloadCompression.stored(body)
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
