import Foundation

/// Collects lines (a logger's output) from any thread, for tests to read back.
public final class LineLog: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    public init() {}

    public func append(_ line: String) {
        lock.lock()
        lines.append(line)
        lock.unlock()
    }

    public var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }
}
