import BridgeCore
import BridgeDaemon
import Foundation
import Testing

/// The status page's month chart: a bar per day that cost something, the limit and the forecast
/// on the period's scale, markers where the level changed, every attribute escaped.
@Suite("Budget chart SVG")
struct BudgetChartTests {
    /// 2026-12-01T00:00:00Z: the period's first day when the budget resets on January 1st.
    static let december1 = 1_796_083_200.0
    static let january1 = december1 + 31 * 86_400

    /// Every element carrying `class="name"`, as its whole opening tag.
    static func elements(_ className: String, in svg: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: "<[a-z]+ class=\"\(className)\"[^>]*>")
        return regex.matches(in: svg, range: NSRange(svg.startIndex..., in: svg)).map {
            String(svg[Range($0.range, in: svg)!])
        }
    }

    /// `attribute`'s value in one opening tag, as a number.
    static func number(_ attribute: String, in tag: String) -> Double? {
        let regex = try! NSRegularExpression(pattern: "\\s\(attribute)=\"([^\"]*)\"")
        guard let match = regex.firstMatch(in: tag, range: NSRange(tag.startIndex..., in: tag)) else { return nil }
        return Double(String(tag[Range(match.range(at: 1), in: tag)!]))
    }

    static func input(
        days: [BudgetChart.Day], used: Int? = nil, limit: Int? = 1_000, now: UnixTime = december1 + 10 * 86_400,
        decisions: [BudgetChart.Decision] = []
    ) -> BudgetChart.Input {
        BudgetChart.Input(
            period: .of(resetsAt: january1, now: now), now: now, days: days, used: used, limit: limit,
            decisions: decisions)
    }

    @Test("the period runs from the 1st of the month before the reset, or the last 30 days")
    func period() {
        let known = BudgetChart.Period.of(resetsAt: Self.january1, now: Self.december1 + 5 * 86_400 + 30)
        #expect(known == .init(start: Self.december1, end: Self.january1, resetKnown: true))
        let midMonth = BudgetChart.Period.of(resetsAt: Self.december1 + 14 * 86_400, now: Self.december1 + 3_600)
        #expect(midMonth.start == Self.december1 - 30 * 86_400, "a reset on Dec 15 counts from Nov 1")
        let unknown = BudgetChart.Period.of(resetsAt: nil, now: Self.december1 + 3_600)
        #expect(unknown == .init(start: Self.december1 - 29 * 86_400, end: Self.december1 + 86_400, resetKnown: false))
    }

    @Test("a bar per day with updates, as tall as its count on the day scale")
    func bars() {
        let days = [
            BudgetChart.Day(start: Self.december1, updates: 40),
            BudgetChart.Day(start: Self.december1 + 86_400, updates: 0),
            BudgetChart.Day(start: Self.december1 + 2 * 86_400, updates: 100),
            BudgetChart.Day(start: Self.december1 + 9 * 86_400, updates: 20),
            // Before the period: not drawn.
            BudgetChart.Day(start: Self.december1 - 86_400, updates: 500),
        ]
        let svg = BudgetChart.render(Self.input(days: days))
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"budget-chart\""))
        #expect(svg.hasSuffix("</svg>"))
        let bars = Self.elements("bar", in: svg)
        #expect(bars.count == 3)
        #expect(svg.contains("data-bars=\"3\""))
        #expect(bars.map { Self.number("data-updates", in: $0) } == [40, 100, 20])
        #expect(svg.contains("data-day=\"2026-12-03\""))
        let heights = bars.compactMap { Self.number("height", in: $0) }
        // 100 is the tallest and the scale's top: the full plot height (210 - 30 - 26).
        #expect(heights == [61.6, 154, 30.8])
        let xs = bars.compactMap { Self.number("x", in: $0) }
        #expect(xs == xs.sorted() && Set(xs).count == 3, "left to right by day")
        #expect(!svg.contains("<script"))
    }

    @Test("the limit line sits at the limit on the period's scale; the forecast runs to the reset")
    func limitAndForecast() throws {
        // 200 used in 10 days: 20 a day, 21 days left: 620 by the reset; the scale tops at 1,000.
        let svg = BudgetChart.render(
            Self.input(days: [BudgetChart.Day(start: Self.december1, updates: 200)], used: 200, limit: 800))
        let limit = try #require(Self.elements("limit-line", in: svg).first)
        let y = try #require(Self.number("y1", in: limit))
        #expect(Self.number("y2", in: limit) == y, "horizontal")
        // top 30 + 154 × (1 - 800 / 1,000)
        #expect(abs(y - 60.8) < 0.01)
        #expect(svg.contains(">limit 800</text>"))
        let forecast = try #require(Self.elements("forecast-line", in: svg).first)
        #expect(svg.contains("data-forecast=\"620\""))
        #expect(abs((Self.number("y2", in: forecast) ?? 0) - (30 + 154 * (1 - 0.62))) < 0.01)
        #expect(Self.number("x2", in: forecast) == Double(1_080 - 52), "ends at the reset, the right edge")
        #expect(svg.contains("620 by the reset"))

        let unlimited = BudgetChart.render(Self.input(days: [], used: 5, limit: nil))
        #expect(Self.elements("limit-line", in: unlimited).isEmpty)
        #expect(unlimited.contains("data-bars=\"0\""))
        let noReset = BudgetChart.render(
            BudgetChart.Input(
                period: .of(resetsAt: nil, now: Self.december1), now: Self.december1, days: [], used: 5, limit: 10,
                decisions: []))
        #expect(Self.elements("forecast-line", in: noReset).isEmpty, "no reset known, nothing to forecast to")
    }

    @Test("a marker where the level changed, not for every decision")
    func levelChanges() {
        let at = Self.december1 + 86_400
        let decisions: [BudgetChart.Decision] = [
            .init(at: at, level: .full), .init(at: at + 10, level: .full), .init(at: at + 3_600, level: .steps),
            .init(at: at + 7_200, level: .steps), .init(at: at + 86_400, level: nil),
            .init(at: at + 90_000, level: .milestones),
        ]
        let svg = BudgetChart.render(Self.input(days: [], decisions: decisions))
        let markers = Self.elements("level-change", in: svg)
        #expect(markers.count == 4)
        #expect(svg.contains("data-level=\"no card\""))
        #expect(svg.contains(">steps</text>") && svg.contains(">milestones</text>"))
    }

    @Test("the id is escaped; numbers are grouped")
    func escaping() {
        let svg = BudgetChart.render(
            Self.input(days: [BudgetChart.Day(start: Self.december1, updates: 12_345)], used: 12_345, limit: 50_000),
            id: "x\"><script>alert(1)</script>")
        #expect(!svg.contains("<script"))
        #expect(svg.contains("id=\"x&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\""))
        #expect(svg.contains("12,345 updates this period of 50,000"))
        #expect(svg.contains(">limit 50,000</text>"))
    }
}
