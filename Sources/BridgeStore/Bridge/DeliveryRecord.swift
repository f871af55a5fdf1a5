import BridgeCore
import Foundation

/// One row of `deliveries`: what arrived, when, and what became of it.
public struct DeliveryRecord: Sendable, Equatable {
    public enum Outcome: String, Sendable, Codable {
        /// Verified, decoded and applied to run state.
        case applied
        /// Deliberately not acted on (unsupported event, filtered out, ping); `reason` says why.
        case ignored
        /// Verified but unusable (malformed body); `reason` says what was wrong.
        case rejected
    }

    /// `X-GitHub-Delivery`; a redelivery repeats it.
    public var id: String
    public var hookID: String?
    public var event: String
    public var action: String?
    public var receivedAt: UnixTime
    public var repository: String?
    public var runID: Int?
    public var runAttempt: Int?
    public var outcome: Outcome
    public var reason: String?
    public var contentType: String?
    /// The raw body, kept for the retention period (GitHub can redeliver for 3 days); nil after.
    public var payload: Data?
    public var payloadBytes: Int
    /// How many times the same id arrived again.
    public var duplicates: Int

    public init(
        id: String, hookID: String?, event: String, action: String?, receivedAt: UnixTime, repository: String?,
        runID: Int?, runAttempt: Int?, outcome: Outcome, reason: String?, contentType: String?, payload: Data?,
        payloadBytes: Int, duplicates: Int = 0
    ) {
        self.id = id
        self.hookID = hookID
        self.event = event
        self.action = action
        self.receivedAt = receivedAt
        self.repository = repository
        self.runID = runID
        self.runAttempt = runAttempt
        self.outcome = outcome
        self.reason = reason
        self.contentType = contentType
        self.payload = payload
        self.payloadBytes = payloadBytes
        self.duplicates = duplicates
    }
}
