import Foundation

/// One entry of a webhook's delivery log (`GET …/hooks/{id}/deliveries`): what GitHub tried to
/// send, and what our listener answered. The recovery sweep compares these with the `deliveries`
/// table and asks for the ones that never arrived again; nothing is applied from the listing.
public struct HookDelivery: Sendable, Equatable {
    /// GitHub's number for this attempt: what `POST …/deliveries/{id}/attempts` redelivers.
    public var id: Int
    /// `X-GitHub-Delivery`: the same for an attempt and its redeliveries.
    public var guid: String
    public var deliveredAt: UnixTime
    public var redelivery: Bool
    /// What the listener answered; 0 when it could not be reached at all.
    public var statusCode: Int
    public var event: String
    public var action: String?

    public init(
        id: Int, guid: String, deliveredAt: UnixTime, redelivery: Bool, statusCode: Int, event: String,
        action: String?
    ) {
        self.id = id
        self.guid = guid
        self.deliveredAt = deliveredAt
        self.redelivery = redelivery
        self.statusCode = statusCode
        self.event = event
        self.action = action
    }

    /// True when the listener took it: a 2xx.
    public var wasAccepted: Bool { (200..<300).contains(statusCode) }

    /// The entries of one page of the listing. An entry missing its id, guid, event or time is
    /// left out (and counted by the caller as unreadable), never guessed at.
    public static func page(_ data: Data) -> (deliveries: [HookDelivery], unreadable: Int)? {
        guard let entries = (try? JSONValue(parsing: data))?.arrayValue else { return nil }
        var deliveries: [HookDelivery] = []
        for entry in entries {
            guard let id = entry["id"]?.intValue, let guid = entry["guid"]?.stringValue, !guid.isEmpty,
                let event = entry["event"]?.stringValue,
                let deliveredAt = entry["delivered_at"]?.stringValue.flatMap(GitHubTimestamp.parse)
            else { continue }
            deliveries.append(
                HookDelivery(
                    id: id, guid: guid, deliveredAt: deliveredAt, redelivery: entry["redelivery"]?.boolValue ?? false,
                    statusCode: entry["status_code"]?.intValue ?? 0, event: event,
                    action: entry["action"]?.stringValue))
        }
        return (deliveries, entries.count - deliveries.count)
    }
}
