import BridgeCore
import Foundation

/// The status page's month chart, as inline SVG: what the push budget's period has cost so far
/// and where it is heading. Bars are the updates PushWard acknowledged each UTC day (on their own
/// scale, right); on the period's scale (left) a dashed line runs from the count now to where the
/// daily average so far would take it by the reset, and a flat line marks the limit, so whether
/// the month will run out reads at a glance. Dashed verticals mark where the planner changed the
/// level runs are drawn at, which is where the bars should change height.
///
/// Pure, and no scripts: the page's CSP forbids them. Geometry only from `Input`, so tests read
/// the bars and lines off the bytes.
public enum BudgetChart {
    /// Updates PushWard acknowledged during one UTC day.
    public struct Day: Sendable, Equatable {
        /// The day's first second (UTC midnight).
        public var start: UnixTime
        public var updates: Int

        public init(start: UnixTime, updates: Int) {
            self.start = start
            self.updates = updates
        }
    }

    /// One budget decision, as a run recorded it: the chart marks where the level differs from
    /// the one before.
    public struct Decision: Sendable, Equatable {
        public var at: UnixTime
        /// Nil: the run got no card.
        public var level: Fidelity?

        public init(at: UnixTime, level: Fidelity?) {
            self.at = at
            self.level = level
        }
    }

    /// Everything drawn.
    public struct Input: Sendable, Equatable {
        public var period: Period
        public var now: UnixTime
        /// Days with updates, oldest first.
        public var days: [Day]
        /// PushWard's count this period; nil: unknown, the bars' sum stands in.
        public var used: Int?
        /// The period's allowance; nil: unlimited (no limit line).
        public var limit: Int?
        /// Oldest first.
        public var decisions: [Decision]

        public init(period: Period, now: UnixTime, days: [Day], used: Int?, limit: Int?, decisions: [Decision]) {
            self.period = period
            self.now = now
            self.days = days
            self.used = used
            self.limit = limit
            self.decisions = decisions
        }

        /// The count the forecast starts from.
        public var spent: Int { used ?? days.reduce(0) { $0 + $1.updates } }

        /// Updates expected by the reset at the average pace so far; nil without a known reset
        /// still ahead, since then there is nothing to forecast to.
        public var forecast: Double? {
            guard period.resetKnown, now < period.end else { return nil }
            let elapsedDays = max(1, (now - period.start) / 86_400)
            return Double(spent) + Double(spent) / elapsedDays * (period.end - now) / 86_400
        }

        /// The level changes: each decision whose level differs from the one before (the first
        /// always counts: it is where the period's drawing started).
        public var levelChanges: [Decision] {
            var changes: [Decision] = []
            for decision in decisions where changes.last.map({ $0.level != decision.level }) ?? true {
                changes.append(decision)
            }
            return changes.filter { $0.at >= period.start && $0.at <= period.end }
        }
    }

    /// The stretch of time the chart spans.
    public struct Period: Sendable, Equatable {
        public var start: UnixTime
        public var end: UnixTime
        /// Whether `end` is PushWard's reset (else the last 30 days, ending tomorrow).
        public var resetKnown: Bool

        public init(start: UnixTime, end: UnixTime, resetKnown: Bool) {
            self.start = start
            self.end = end
            self.resetKnown = resetKnown
        }

        /// The period a budget counts: from the 1st of the month before the reset (UTC) to the
        /// reset; without a reset, the last 30 UTC days, today included.
        public static func of(resetsAt: UnixTime?, now: UnixTime) -> Period {
            let today = (now / 86_400).rounded(.down) * 86_400
            guard let resetsAt, resetsAt > now else {
                return Period(start: today - 29 * 86_400, end: today + 86_400, resetKnown: false)
            }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
            let reset = Date(timeIntervalSince1970: resetsAt)
            let monthBefore = calendar.date(byAdding: .month, value: -1, to: reset) ?? reset
            let first = calendar.date(from: calendar.dateComponents([.year, .month], from: monthBefore))
            // A reset more than a month ahead still shows today.
            let start = min(first?.timeIntervalSince1970 ?? today, today)
            return Period(start: start, end: resetsAt, resetKnown: true)
        }
    }

    static let width = 1080.0
    static let height = 210.0
    static let left = 58.0
    static let right = 52.0
    static let top = 30.0
    static let bottom = 26.0
    static let barColor = "#0071e3"
    static let lineColor = "#c93400"
    static let limitColor = "#d70015"
    static let textColor = "#6e6e73"

    /// The chart; `id` names the root (escaped: it is an attribute).
    public static func render(_ input: Input, id: String = "budget-chart") -> String {
        let period = input.period
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let span = max(86_400, period.end - period.start)
        func x(_ time: UnixTime) -> Double {
            left + (min(max(time, period.start), period.end) - period.start) / span * plotWidth
        }

        let days = input.days.filter { $0.updates > 0 && $0.start >= period.start && $0.start < period.end }
        let dayScale = niceCeiling(Double(days.map(\.updates).max() ?? 1))
        let forecast = input.forecast
        let totalScale = niceCeiling(
            max(Double(input.limit ?? 0), forecast ?? 0, Double(input.spent), 1) * 1.05)
        func yTotal(_ value: Double) -> Double { top + plotHeight - value / totalScale * plotHeight }

        var summary = "\(grouped(input.spent)) updates this period"
        if let limit = input.limit { summary += " of \(grouped(limit))" }
        if let forecast { summary += "; at this pace \(grouped(Int(forecast.rounded()))) by the reset" }
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"budget-chart\" id=\"\(Markup.escaped(id))\""
        svg += " data-bars=\"\(days.count)\" viewBox=\"0 0 \(n(width)) \(n(height))\" width=\"100%\""
        svg += " font-size=\"11\" font-family=\"\(Markup.escaped(CardSVG.fontFamily))\" role=\"img\""
        svg += " aria-label=\"\(Markup.escaped(summary))\"><title>\(Markup.escaped(summary))</title>"

        // The frame: the baseline, a grid line at the top of each scale, and both scales' labels.
        svg += "<g class=\"axes\" stroke=\"\(textColor)\" stroke-opacity=\"0.35\">"
        svg += "<line x1=\"\(n(left))\" y1=\"\(n(top + plotHeight))\" x2=\"\(n(width - right))\""
        svg += " y2=\"\(n(top + plotHeight))\"/>"
        svg += "<line x1=\"\(n(left))\" y1=\"\(n(top))\" x2=\"\(n(width - right))\" y2=\"\(n(top))\""
        svg += " stroke-dasharray=\"2 4\"/></g>"
        svg += "<g class=\"scale\" fill=\"\(textColor)\">"
        svg += "<text x=\"\(n(left - 6))\" y=\"\(n(top + 4))\" text-anchor=\"end\">\(grouped(Int(totalScale)))</text>"
        svg += "<text x=\"\(n(left - 6))\" y=\"\(n(top + plotHeight + 4))\" text-anchor=\"end\">0</text>"
        svg += "<text x=\"\(n(width - right + 6))\" y=\"\(n(top + 4))\">\(grouped(Int(dayScale)))/d</text>"
        svg += "<text x=\"\(n(width - right + 6))\" y=\"\(n(top + plotHeight + 4))\">0/d</text>"
        for tick in dateTicks(period) {
            svg += "<text x=\"\(n(x(tick)))\" y=\"\(n(height - 8))\" text-anchor=\"middle\">"
            svg += "\(Markup.escaped(dateLabel(tick)))</text>"
        }
        svg += "</g>"

        // Bars: a slot per day, the bar in its middle 70 %.
        let slot = 86_400 / span * plotWidth
        svg += "<g class=\"bars\" fill=\"\(barColor)\" fill-opacity=\"0.55\">"
        for day in days {
            let barHeight = max(1, Double(day.updates) / dayScale * plotHeight)
            svg +=
                "<rect class=\"bar\" data-day=\"\(Markup.escaped(String(GitHubTimestamp.format(day.start).prefix(10))))\""
            svg += " data-updates=\"\(day.updates)\" x=\"\(n(x(day.start) + slot * 0.15))\""
            svg += " y=\"\(n(top + plotHeight - barHeight))\" width=\"\(n(max(1, slot * 0.7)))\""
            svg += " height=\"\(n(barHeight))\" rx=\"\(n(min(3, slot * 0.2)))\">"
            svg += "<title>\(Markup.escaped(dateLabel(day.start))): \(grouped(day.updates)) updates</title></rect>"
        }
        svg += "</g>"

        // Where the level changed, behind the lines.
        for change in input.levelChanges {
            let level = change.level?.rawValue ?? "no card"
            let at = x(change.at)
            svg += "<g class=\"level-change\" data-level=\"\(Markup.escaped(level))\" stroke=\"\(textColor)\">"
            svg += "<line x1=\"\(n(at))\" y1=\"\(n(top - 12))\" x2=\"\(n(at))\" y2=\"\(n(top + plotHeight))\""
            svg += " stroke-dasharray=\"3 3\"/>"
            svg += "<text x=\"\(n(at + 4))\" y=\"\(n(top - 4))\" stroke=\"none\" fill=\"\(textColor)\">"
            svg += "\(Markup.escaped(level))</text></g>"
        }

        if let limit = input.limit {
            let y = yTotal(Double(limit))
            svg += "<g class=\"limit\" data-limit=\"\(limit)\"><line class=\"limit-line\" x1=\"\(n(left))\""
            svg += " y1=\"\(n(y))\" x2=\"\(n(width - right))\" y2=\"\(n(y))\" stroke=\"\(limitColor)\""
            svg += " stroke-width=\"1.5\"/><text x=\"\(n(width - right - 4))\" y=\"\(n(y - 5))\""
            svg += " text-anchor=\"end\" fill=\"\(limitColor)\">limit \(grouped(limit))</text></g>"
        }

        // Today, and the forecast from today's count to the reset.
        let now = x(input.now)
        svg += "<line class=\"now\" x1=\"\(n(now))\" y1=\"\(n(top))\" x2=\"\(n(now))\" y2=\"\(n(top + plotHeight))\""
        svg += " stroke=\"\(textColor)\" stroke-opacity=\"0.5\"/>"
        let spentY = yTotal(Double(input.spent))
        if let forecast {
            svg += "<g class=\"forecast\" data-forecast=\"\(Int(forecast.rounded()))\">"
            svg += "<line class=\"forecast-line\" x1=\"\(n(now))\" y1=\"\(n(spentY))\" x2=\"\(n(x(period.end)))\""
            svg += " y2=\"\(n(yTotal(forecast)))\" stroke=\"\(lineColor)\" stroke-width=\"2\""
            svg += " stroke-dasharray=\"6 4\"/>"
            svg += "<text x=\"\(n(x(period.end) - 4))\" y=\"\(n(yTotal(forecast) - 6))\" text-anchor=\"end\""
            svg += " fill=\"\(lineColor)\">\(grouped(Int(forecast.rounded()))) by the reset</text></g>"
        }
        svg += "<circle class=\"spent\" cx=\"\(n(now))\" cy=\"\(n(spentY))\" r=\"3.5\" fill=\"\(lineColor)\">"
        svg += "<title>\(grouped(input.spent)) so far</title></circle>"
        return svg + "</svg>"
    }

    /// The period's first day, then every seventh, as axis labels.
    static func dateTicks(_ period: Period) -> [UnixTime] {
        let first = (period.start / 86_400).rounded(.up) * 86_400
        return stride(from: first, to: period.end, by: 7 * 86_400).map { $0 }
    }

    /// `Dec 1`: the axis has no room for a year, and the period never spans two Decembers.
    static func dateLabel(_ time: UnixTime) -> String {
        let stamp = GitHubTimestamp.format(time)
        let parts = stamp.prefix(10).split(separator: "-")
        guard parts.count == 3, let month = Int(parts[1]), let day = Int(parts[2]), (1...12).contains(month) else {
            return String(stamp.prefix(10))
        }
        let names = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return "\(names[month - 1]) \(day)"
    }

    /// The smallest round number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten) at or
    /// above `value`, so the scale's top label reads easily without wasting half the height.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 1 else { return 1 }
        let power = pow(10, (log10(value)).rounded(.down))
        for step in [1.0, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10] where step * power >= value { return step * power }
        return 10 * power
    }

    /// `12,345`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
            result.append(digit)
        }
        return (value < 0 ? "-" : "") + result
    }

    static func n(_ value: Double) -> String { CardSVG.n(value) }
}
