import BridgeCore
import Foundation

/// A home-screen widget on the status page, drawn from what PushWard holds (the content its last
/// acknowledged request left, as the phone shows it): the bar, the label and subtitle, the stat
/// rows, and what the widget cost. Every string came from a payload: escaped per scalar.
enum WidgetPanel {
    static func render(_ session: WidgetSession, now: UnixTime) -> String {
        var html = "<article class=\"widget\" data-widget=\"\(Markup.escaped(session.slug))\">"
        html += "<header><strong>\(Markup.escaped(session.slug))</strong>"
        html += "<span class=\"dim\"> · \(session.updatesSpent) widget updates</span></header>"
        guard let shown = session.shown else {
            html += "<p class=\"dim\">Not on PushWard yet: it is created with the first run it follows.</p>"
            return html + problem(session) + "</article>"
        }
        let content = shown.content
        let value = min(1, max(0, content["value"]?.doubleValue ?? 0))
        let color = CardLayout.rgb(content["accent_color"]?.stringValue ?? "blue")
        let fill = "rgb(\(color.red),\(color.green),\(color.blue))"
        let percent = Int((value * 100).rounded())
        html += "<p>\(Markup.escaped(content["label"]?.stringValue ?? ""))"
        html += " <span class=\"count\" data-value=\"\(percent)\">\(percent)%</span></p>"
        // A fixed-size SVG bar: no style attribute, nothing the policy has to allow.
        html += "<svg class=\"widget-bar\" viewBox=\"0 0 240 8\" width=\"240\" height=\"8\" role=\"img\""
        html += " aria-label=\"\(percent)%\"><rect width=\"240\" height=\"8\" rx=\"4\" fill=\"rgb(128,128,128)\""
        html += " fill-opacity=\"0.25\"/><rect width=\"\(String(format: "%.1f", 240 * value))\" height=\"8\" rx=\"4\""
        html += " fill=\"\(fill)\"/></svg>"
        html += "<p class=\"dim\">\(Markup.escaped(content["subtitle"]?.stringValue ?? ""))</p>"
        if let end = content["end_date"]?.stringValue.flatMap(GitHubTimestamp.parse) {
            html += "<p class=\"dim\">advancing on the phone until \(Markup.escaped(GitHubTimestamp.format(end)))</p>"
        }
        let rows = content["stat_rows"]?.arrayValue ?? []
        if !rows.isEmpty {
            html += "<dl class=\"stats\">"
            for row in rows {
                let unit = row["unit"]?.stringValue.map { " " + $0 } ?? ""
                html += "<dt>\(Markup.escaped(row["label"]?.stringValue ?? ""))</dt>"
                html += "<dd>\(Markup.escaped((row["value"]?.stringValue ?? "") + unit))</dd>"
            }
            html += "</dl>"
        }
        return html + problem(session) + "</article>"
    }

    static func problem(_ session: WidgetSession) -> String {
        guard let problem = session.lastProblem else { return "" }
        let at = session.lastProblemAt.map { " (\(GitHubTimestamp.format($0)))" } ?? ""
        return "<p class=\"problem\" role=\"alert\">Last problem\(at): \(Markup.escaped(problem))</p>"
    }
}
