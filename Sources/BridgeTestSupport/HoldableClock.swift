import BridgeCore
import Foundation

/// A daemon's clock for a test of a time window: the wall clock until `hold()`, standing still
/// while held, and running on from where it stood after `release()` (it never goes back, so the
/// daemon never sees time reversed).
///
/// Why: a claim about what falls inside the request pacer's window (15 s of PushWard's minute)
/// made on the wall clock depends on how fast the machine sends what the test asks; under
/// ThreadSanitizer the window rolled before the test's next step arrived. Held, the window holds
/// whatever it admitted for as long as the test's steps take.
public final class HoldableClock: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var heldAt: UnixTime?
    private var behind: Double = 0

    public init() {}

    /// The daemon's time now.
    public func now() -> UnixTime {
        lock.withLock { heldAt ?? Date().timeIntervalSince1970 - behind }
    }

    /// Stops the clock where it stands; a second hold changes nothing.
    public func hold() {
        lock.withLock {
            if heldAt == nil { heldAt = Date().timeIntervalSince1970 - behind }
        }
    }

    /// Lets the clock run on from where it was held.
    public func release() {
        lock.withLock {
            guard let held = heldAt else { return }
            behind = Date().timeIntervalSince1970 - held
            heldAt = nil
        }
    }
}
