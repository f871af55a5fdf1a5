import BridgeCore

/// What the alert sender keeps between turns: which alerts have a POST out, when the next one
/// falls due, and a pause the notification quota or a refused key imposed. The alerts themselves
/// are rows of the store; this is when to look at them again.
struct AlertOutbox: Sendable, Equatable {
    private(set) var inFlight: Set<Int64> = []
    /// When the earliest pending alert is due; nil when none is pending.
    private(set) var nextDue: UnixTime?
    private(set) var pausedUntil: UnixTime?
    /// Why alerts are paused; nil when they are not.
    private(set) var pauseReason: String?

    /// `nextDue`: the earliest pending alert the store holds at start.
    init(nextDue: UnixTime? = nil) {
        self.nextDue = nextDue
    }

    /// A transaction planned alerts: they are due at once.
    mutating func planned(at now: UnixTime) {
        nextDue = min(nextDue ?? now, now)
    }

    /// When the dispatcher should look again: the next due, or the end of a pause past it.
    var nextWakeup: UnixTime? {
        guard let due = nextDue else { return nil }
        return max(due, pausedUntil ?? due)
    }

    /// Whether alerts may be taken at `now`: one is due and no pause holds. A pause that ended is
    /// lifted.
    mutating func opens(at now: UnixTime) -> Bool {
        guard let due = nextDue, due <= now else { return false }
        if let until = pausedUntil {
            guard now >= until else { return false }
            pausedUntil = nil
            pauseReason = nil
        }
        return true
    }

    /// Whether the alert with `id` has a POST out.
    func isOut(_ id: Int64) -> Bool { inFlight.contains(id) }

    /// The alerts with `ids` were handed out: their POSTs are out.
    mutating func handOut(_ ids: [Int64]) {
        inFlight.formUnion(ids)
    }

    /// When to look again after handing alerts out, the store's next due being `stored`. `held`:
    /// an alert waits for its card; `pacedRoom`: the pacer held one back until then. With alerts
    /// out, or one waiting for its card, what is due now is looked at again in a second; paced
    /// ones when there is room.
    mutating func reschedule(stored: UnixTime?, held: Bool, pacedRoom: UnixTime?, at now: UnixTime) {
        nextDue = stored.map { max($0, now + 0.001) }
        if !inFlight.isEmpty || held, nextDue.map({ $0 <= now + 0.001 }) == true {
            nextDue = now + 1
        }
        if let pacedRoom { nextDue = min(nextDue ?? pacedRoom, pacedRoom) }
    }

    /// The store could not say which alerts are due: asked again shortly.
    mutating func unreadable(at now: UnixTime) {
        nextDue = now + 5
    }

    /// The POST of `id` is no longer out (answered, or abandoned for the next leader).
    mutating func finished(_ id: Int64) {
        inFlight.remove(id)
    }

    /// An answer was recorded; `stored`: the store's next due, which may be earlier than known.
    mutating func answered(stored: UnixTime?) {
        nextDue = [nextDue, stored].compactMap { $0 }.min()
    }

    /// Holds every alert back until `until` (a later pause extends it); true when alerts were not
    /// paused already, so the pause is said once for as long as it lasts.
    mutating func pause(until: UnixTime, why: String) -> Bool {
        let first = pauseReason == nil
        pausedUntil = max(pausedUntil ?? until, until)
        pauseReason = why
        return first
    }
}
