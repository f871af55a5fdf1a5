/// How many runs wanted a card in each hour of the last 14 days: the rate the budget planner
/// forecasts with. Hourly buckets keep it at most 336 numbers, whatever the traffic.
public struct RunArrivals: Sendable, Equatable, Codable {
    public static let window: UnixTime = 14 * 86_400
    /// Runs per hour, keyed by the hour (seconds since 1970 / 3600).
    public private(set) var perHour: [Int: Int] = [:]
    /// The earliest hour anything was observed in: before 14 days of history, the rate is taken
    /// over the time actually observed.
    public private(set) var observedSince: UnixTime?

    public init() {}

    public mutating func record(at time: UnixTime, count: Int = 1) {
        perHour[Int(time / 3_600), default: 0] += count
        observedSince = min(observedSince ?? time, time)
    }

    /// Forgets hours older than the window.
    public mutating func prune(at now: UnixTime) {
        let oldest = Int((now - Self.window) / 3_600)
        perHour = perHour.filter { $0.key >= oldest }
        if let since = observedSince, since < now - Self.window { observedSince = now - Self.window }
    }

    /// Runs a second, blended with `prior` runs a day worth one day of observation, so a new
    /// install neither expects nothing nor trusts its first hour.
    public func rate(at now: UnixTime, priorPerDay: Double) -> Double {
        let oldest = Int((now - Self.window) / 3_600)
        let count = perHour.filter { $0.key >= oldest }.values.reduce(0, +)
        let observed = max(0, now - max(observedSince ?? now, now - Self.window))
        return (Double(count) + priorPerDay) / (observed + 86_400)
    }
}
