import BridgeCore
import Foundation

/// Every request a fake PushWard receives, as JSON Lines in the directory named by
/// `PUSHWARD_FAKE_REQUEST_LOG`, for `Tests/openapi/check_requests.py` to validate against
/// PushWard's OpenAPI document after the suite: the fake's own rules are a reading of the
/// documents, the schema is the documents themselves.
///
/// One file per fake (the process id and a sequence number), written under the fake's lock, so
/// lines stay in the order the fake answered them and never interleave. Each line names the
/// test file and line that created the fake, so a violation points at a test.
public final class FakeRequestLog: @unchecked Sendable {
    /// The environment variable naming the directory.
    public static let variable = "PUSHWARD_FAKE_REQUEST_LOG"
    private static let sequence = NSLock()
    nonisolated(unsafe) private static var next = 0

    private let handle: FileHandle
    private let origin: String

    /// Nil when `directory` is empty or the file cannot be created (the check then finds fewer
    /// requests, and says how many it read).
    init?(directory: String, origin: String) {
        guard !directory.isEmpty else { return nil }
        Self.sequence.lock()
        Self.next += 1
        let number = Self.next
        Self.sequence.unlock()
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/fake-\(getpid())-\(number).jsonl"
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else { return nil }
        self.handle = handle
        self.origin = origin
    }

    deinit { try? handle.close() }

    /// Appends one request and the status it got. `unchecked` (a reason) marks a request a test
    /// sent invalid on purpose: the check counts it and skips it.
    func append(
        method: String, path: String, query: String?, contentType: String?, body: Data, status: Int,
        unchecked: String?
    ) {
        var line: [String: JSONValue] = [
            "origin": .string(origin), "method": .string(method), "path": .string(path),
            "status": .number(Double(status)),
        ]
        if let query { line["query"] = .string(query) }
        if let contentType { line["content_type"] = .string(contentType) }
        if !body.isEmpty {
            if let parsed = try? JSONValue(parsing: body) {
                line["body"] = parsed
            } else {
                line["body_text"] = .string(String(decoding: body, as: UTF8.self))
            }
        }
        if let unchecked { line["unchecked"] = .string(unchecked) }
        var data = JSONValue.object(line).canonicalData
        data.append(0x0A)
        try? handle.write(contentsOf: data)
    }
}
