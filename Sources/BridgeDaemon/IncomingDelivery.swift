import BridgeCore
import Foundation

/// A verified webhook request, as the ingress hands it to the service.
///
/// It is decoded where it is built, on the HTTP thread that received it: decoding is pure and the
/// most expensive step of a delivery, so doing it there spreads it over every core instead of
/// adding it to the store's one serial queue (make bench, bench/README.md).
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
