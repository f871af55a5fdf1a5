import FastJSON
import Foundation

/// A decode's value, or its error as case, type, coding path and message: what the differential
/// tests compare between `FastJSONDecoder` and Foundation's `JSONDecoder`.
public enum DecodingOutcome<Value: Equatable>: Equatable, CustomStringConvertible {
    case value(Value)
    case failure(String)

    /// Decodes `json` with `FastJSONDecoder`, or with `JSONDecoder` when `foundation` is set.
    public init(decoding type: Value.Type, from json: Data, foundation: Bool = false) where Value: Decodable {
        do {
            self = .value(
                foundation ? try JSONDecoder().decode(type, from: json) : try FastJSONDecoder().decode(type, from: json)
            )
        } catch let error as DecodingError {
            self = .failure(DecodingErrorText.describe(error))
        } catch {
            self = .failure("not a DecodingError: \(error)")
        }
    }

    public var description: String {
        switch self {
        case .value(let value): "value \(value)"
        case .failure(let error): error
        }
    }
}

/// A `DecodingError` as one comparable line: case, type or key, dotted coding path, message.
public enum DecodingErrorText {
    public static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { key in key.intValue.map { "\(key.stringValue)#\($0)" } ?? key.stringValue }
                .joined(separator: "/")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "keyNotFound \(key.stringValue) at \(path(context.codingPath)): \(context.debugDescription)"
        case .valueNotFound(let type, let context):
            return "valueNotFound \(type) at \(path(context.codingPath)): \(context.debugDescription)"
        case .typeMismatch(let type, let context):
            return "typeMismatch \(type) at \(path(context.codingPath)): \(context.debugDescription)"
        case .dataCorrupted(let context):
            return "dataCorrupted at \(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
