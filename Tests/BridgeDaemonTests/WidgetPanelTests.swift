import BridgeCore
import Testing

@testable import BridgeDaemon

/// The status page's drawing of a widget: what PushWard holds, escaped per scalar.
@Suite("widget panel")
struct WidgetPanelTests {
    @Test("the bar, label, subtitle and stat rows as PushWard holds them; hostile text stays text")
    func panel() {
        var session = WidgetSession(slug: "ci-main")
        session.updatesSpent = 3
        session.shown = WidgetSession.Shown(
            run: RunKey(repository: "a/b", runID: 1, attempt: 1), final: false,
            content: [
                "template": "progress", "value": 0.42, "label": "evil/<script>alert(1)</script> · CI\u{202E}",
                "subtitle": "main\" onload=\"x · Build", "accent_color": "red",
                "stat_rows": [["label": "Jobs", "value": "2/5"], ["label": "Queued", "value": "12", "unit": "s"]],
                "end_date": "2027-01-01T00:00:00Z",
            ])
        let html = WidgetPanel.render(session, now: 0)
        #expect(html.contains("data-value=\"42\">42%"))
        #expect(html.contains("width=\"100.8\""))
        #expect(html.contains("fill=\"rgb(255,59,48)\""))
        #expect(html.contains("&lt;script&gt;") && !html.contains("<script>"))
        #expect(html.contains("main&quot; onload=&quot;x"))
        #expect(!html.contains("\u{202E}"))
        #expect(html.contains("<dt>Queued</dt><dd>12 s</dd>"))
        #expect(html.contains("3 widget updates"))
        #expect(html.contains("until 2027-01-01T00:00:00Z"))
        var unsent = WidgetSession(slug: "new")
        unsent.lastProblem = "429 quota.exceeded: <spent>"
        unsent.lastProblemAt = 1_800_000_000
        let waiting = WidgetPanel.render(unsent, now: 0)
        #expect(waiting.contains("Not on PushWard yet"))
        #expect(waiting.contains("Last problem (2027-01-15T08:00:00Z): 429 quota.exceeded: &lt;spent&gt;"))
    }
}
