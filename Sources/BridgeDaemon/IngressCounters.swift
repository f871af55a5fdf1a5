import Foundation

/// Counters the ingress keeps (signature failures, answers by status), read by `/metrics` later
/// and by tests now. A lock is enough: increments are rare next to a database commit.
public final class IngressCounters: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: Int] = [:]

    public init() {}

    public func add(_ name: String, _ amount: Int = 1) {
        lock.lock()
        values[name, default: 0] += amount
        lock.unlock()
    }

    public func value(_ name: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return values[name] ?? 0
    }

    public var snapshot: [String: Int] {
        lock.lock()
        defer { lock.unlock() }
        return values
    }
}
