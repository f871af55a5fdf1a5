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
    /// The body's fingerprint: a body seen before under another delivery id (a captured delivery
    /// replayed with a new `X-GitHub-Delivery`) is a duplicate. For a webhook, its verified
    /// signature (`WebhookSignature.fingerprint`), computed by the check already: hashing every
    /// body again cost about a tenth of ingest's CPU at 2,500 deliveries a second. Otherwise (a
    /// lookup's observation, a stored delivery) SHA-256 of the body, in hex.
    public var bodyDigest: String

    public init(
        id: String, event: String, hookID: String?, contentType: String?, body: Data, receivedAt: UnixTime,
        bodyDigest: String? = nil
    ) {
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
        self.bodyDigest = bodyDigest ?? SHA256.hex(SHA256.digest(Array(body)))
    }

    /// How long a body is remembered for `bodyDigest`: as long as payloads are kept by default,
    /// GitHub's 3 days of redelivery.
    public static let defaultBodyMemory: Double = 3 * 86_400

    /// The 200 a duplicate gets: its own id, and the first delivery's when that had another.
    static func duplicate(_ id: String, of original: String? = nil) -> IngestResult {
        var body: [String: JSONValue] = ["status": "duplicate", "delivery": .string(id)]
        if let original, original != id { body["same_body_as"] = .string(original) }
        return IngestResult(status: 200, body: .object(body))
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
