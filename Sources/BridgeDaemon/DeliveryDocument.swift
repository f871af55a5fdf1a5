import BridgeCore
import BridgeStore
import Foundation

/// The JSON document of one delivery: `deliveries list/show --json` and
/// `GET /api/deliveries/{id}`. Shared so the CLI and the admin API cannot drift apart.
public enum DeliveryDocument {
    /// `payload` adds the raw body (parsed when it is JSON, else as text; null once retention
    /// dropped it): only one delivery at a time is shown with it, a list would be megabytes.
    public static func json(_ delivery: DeliveryRecord, payload: Bool) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(delivery.id), "event": .string(delivery.event),
            "action": delivery.action.map { .string($0) } ?? .null, "received_at": .number(delivery.receivedAt),
            "repository": delivery.repository.map { .string($0) } ?? .null,
            "run_id": delivery.runID.map { .number(Double($0)) } ?? .null,
            "run_attempt": delivery.runAttempt.map { .number(Double($0)) } ?? .null,
            "outcome": .string(delivery.outcome.rawValue), "reason": delivery.reason.map { .string($0) } ?? .null,
            "duplicates": .number(Double(delivery.duplicates)), "payload_bytes": .number(Double(delivery.payloadBytes)),
            "hook_id": delivery.hookID.map { .string($0) } ?? .null,
        ]
        if payload {
            object["payload"] =
                delivery.payload.map { (try? JSONValue(parsing: $0)) ?? .string(String(decoding: $0, as: UTF8.self)) }
                ?? .null
        }
        return .object(object)
    }
}
