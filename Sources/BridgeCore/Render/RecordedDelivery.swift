import Foundation

/// A delivery as recorded on disk, for `render` and `replay`: either a bare payload file whose name
/// starts with the event (`workflow_job.completed.json`), or a JSON Lines file of
/// `{"event", "delivery", "payload"}` objects.
public struct RecordedDelivery: Sendable, Equatable {
    public var event: String
    /// The `X-GitHub-Delivery` id when the recording carries one.
    public var deliveryID: String?
    /// The exact payload bytes (the raw file for a bare payload, so signatures still match).
    public var body: Data

    public init(event: String, deliveryID: String?, body: Data) {
        self.event = event
        self.deliveryID = deliveryID
        self.body = body
    }

    /// What went wrong reading a recording, naming the file (and line).
    public struct LoadError: Error, Sendable, Equatable, CustomStringConvertible {
        public var file: String
        public var detail: String
        public var description: String { "\(file): \(detail)" }
    }

    /// Reads one recording file; `fileName` is the path as the user gave it, for messages.
    public static func parse(fileName: String, contents: Data) throws(LoadError) -> [RecordedDelivery] {
        let baseName = (fileName as NSString).lastPathComponent
        if baseName.hasSuffix(".jsonl") || baseName.hasSuffix(".ndjson") {
            return try parseLines(fileName: fileName, contents: contents)
        }
        guard let event = baseName.split(separator: ".").first.map(String.init), !event.isEmpty,
            baseName.contains(".")
        else {
            throw LoadError(
                file: fileName,
                detail: "cannot tell the event: name a payload file <event>.<anything>.json, or use .jsonl")
        }
        guard contents.contains(where: { !Self.isWhitespace($0) }) else {
            throw LoadError(file: fileName, detail: "the file is empty")
        }
        return [RecordedDelivery(event: event, deliveryID: nil, body: contents)]
    }

    private static func parseLines(fileName: String, contents: Data) throws(LoadError) -> [RecordedDelivery] {
        var deliveries: [RecordedDelivery] = []
        // Empty lines are kept in the split so that `index + 1` is the line number an editor shows.
        for (index, line) in contents.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .enumerated()
        where line.contains(where: { !isWhitespace($0) }) {
            let object: [String: JSONValue]
            do {
                guard let parsed = try JSONValue(parsing: Data(line)).objectValue else {
                    throw LoadError(file: fileName, detail: "line \(index + 1): not a JSON object")
                }
                object = parsed
            } catch let error as LoadError {
                throw error
            } catch {
                throw LoadError(file: fileName, detail: "line \(index + 1): not valid JSON")
            }
            guard let event = object["event"]?.stringValue, !event.isEmpty else {
                throw LoadError(file: fileName, detail: "line \(index + 1): missing \"event\"")
            }
            guard let payload = object["payload"], payload.objectValue != nil else {
                throw LoadError(file: fileName, detail: "line \(index + 1): missing \"payload\" object")
            }
            deliveries.append(
                RecordedDelivery(
                    event: event, deliveryID: object["delivery"]?.stringValue, body: payload.canonicalData))
        }
        // As for a bare payload: a recording with nothing in it is a mistake, not an empty run.
        guard !deliveries.isEmpty else { throw LoadError(file: fileName, detail: "the file is empty") }
        return deliveries
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
