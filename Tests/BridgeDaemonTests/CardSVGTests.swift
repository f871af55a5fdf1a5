import BridgeCore
import BridgeDaemon
import Foundation
import Testing

/// The card drawing on the status page: one column per step, a rounded bar per parallel job,
/// widths from the weights, colours from the content, the current step and the live window.
@Suite("Card SVG")
struct CardSVGTests {
    /// The values of `attribute` on every element of `class` (in document order).
    static func attribute(_ attribute: String, of className: String, in svg: String) -> [String] {
        let pattern = "<[a-z]+ class=\"\(className)\"[^>]*?\\s\(attribute)=\"([^\"]*)\""
        let regex = try! NSRegularExpression(pattern: pattern)
        return regex.matches(in: svg, range: NSRange(svg.startIndex..., in: svg)).map {
            String(svg[Range($0.range(at: 1), in: svg)!])
        }
    }

    static func count(_ className: String, in svg: String) -> Int {
        svg.components(separatedBy: "class=\"\(className)\"").count - 1
    }

    static func render(_ content: JSONValue, isEnded: Bool = false, now: UnixTime? = nil) -> String {
        CardSVG.render(
            CardLayout(content: content.objectValue ?? [:], isEnded: isEnded), options: .init(id: "t", now: now))
    }

    static let matrix: JSONValue = [
        "template": "steps", "state": "Test 1/3", "subtitle": "widgets / CI", "current_step": 3, "total_steps": 5,
        "progress": 0.4, "step_rows": [1, 2, 3, 1, 1], "accent_color": "blue",
        "step_labels": ["lint", "build", "test", "scan", "deploy"],
    ]

    @Test("a matrix draws a column per step and a bar per job, the current column outlined")
    func matrixLayout() {
        let svg = Self.render(Self.matrix)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"card\""))
        #expect(svg.hasSuffix("</svg>"))
        #expect(svg.contains("data-style=\"matrix\""))
        #expect(Self.count("step", in: svg) == 5)
        #expect(Self.attribute("data-rows", of: "step", in: svg) == ["1", "2", "3", "1", "1"])
        #expect(Self.count("job", in: svg) == 8)
        // Equal widths without weights.
        #expect(Set(Self.attribute("data-width", of: "step", in: svg)) == ["0.2000"])
        // Steps before the current one full, the current one started, later ones empty.
        #expect(Self.attribute("data-fill", of: "step", in: svg) == ["1", "1", "0.5", "0", "0"])
        #expect(Self.count("fill", in: svg) == 1 + 2 + 3)
        #expect(Self.count("current", in: svg) == 1)
        #expect(svg.contains("<g class=\"step\" data-step=\"3\" data-rows=\"3\""))
        let current = svg.range(of: "class=\"current\"")!.lowerBound
        let third = svg.range(of: "data-step=\"3\"")!.lowerBound
        let fourth = svg.range(of: "data-step=\"4\"")!.lowerBound
        #expect(third < current && current < fourth, "the outline belongs to step 3")
        #expect(svg.contains(">3/5</text>"))
        #expect(svg.contains(">Test 1/3</text>"))
        #expect(svg.contains(">widgets / CI</text>"))
        #expect(Self.count("label", in: svg) == 5)
        #expect(Self.count("live", in: svg) == 0)
        #expect(Self.count("eta", in: svg) == 0)
    }

    @Test("labels are drawn only up to six steps, as on the phone")
    func labelsUpToSix() {
        var content = Self.matrix.objectValue!
        content["total_steps"] = 7
        content["step_rows"] = [1, 1, 1, 1, 1, 1, 1]
        content["step_labels"] = ["a", "b", "c", "d", "e", "f", "g"]
        let svg = Self.render(.object(content))
        #expect(Self.count("step", in: svg) == 7)
        #expect(Self.count("label", in: svg) == 0)
    }

    @Test("a weighted matrix keeps the fan-out and sizes columns by weight")
    func weightedMatrix() throws {
        let content: JSONValue = [
            "template": "steps", "state": "Test", "current_step": 3, "total_steps": 6, "progress": 0.5,
            "step_rows": [1, 1, 3, 1, 1, 1], "step_weights": [15, 180, 90, 45, 20, 60],
            "step_colors": ["purple", "blue", "yellow", "orange", "green", "green"], "accent_color": "green",
        ]
        let svg = Self.render(content)
        #expect(svg.contains("data-style=\"weighted matrix\""))
        #expect(Self.count("step", in: svg) == 6)
        #expect(Self.count("job", in: svg) == 8)
        let widths = Self.attribute("data-width", of: "step", in: svg).compactMap(Double.init)
        let weights = [15.0, 180, 90, 45, 20, 60]
        let sum = weights.reduce(0, +)
        #expect(widths.count == 6)
        for (width, weight) in zip(widths, weights) { #expect(abs(width - weight / sum) < 0.0001) }
        // The drawn bars follow the weights too: Build's is about twice Test's, twelve times Lint's.
        let bars = Self.attribute("width", of: "job", in: svg).compactMap(Double.init)
        #expect(bars.count == 8)
        #expect(bars[1] > bars[2] * 1.9 && bars[1] < bars[2] * 2.1)
        #expect(bars[1] > bars[0] * 10)
        // Step colours, the current column filled to `progress`.
        let fills = Self.attribute("fill", of: "job", in: svg)
        #expect(fills[0] == "rgb(175,82,222)")
        #expect(fills[1] == "rgb(0,122,255)")
        #expect(fills[2...4].allSatisfy { $0 == "rgb(255,204,0)" })
        #expect(fills[5] == "rgb(255,149,0)")
        #expect(fills[6] == "rgb(52,199,89)")
        #expect(Self.attribute("data-fill", of: "step", in: svg) == ["1", "1", "0.5", "0", "0", "0"])
    }

    @Test("weights alone draw one row of segments; empty colours fall back to the accent")
    func segmented() {
        let content: JSONValue = [
            "template": "steps", "state": "Drying", "current_step": 3, "total_steps": 3, "progress": 0.5,
            "step_labels": ["Wash", "Rinse", "Dry"], "step_weights": [1, 2, 1], "step_colors": ["#112233", "", "teal"],
            "accent_color": "orange",
        ]
        let svg = Self.render(content)
        #expect(svg.contains("data-style=\"segmented\""))
        #expect(Self.count("job", in: svg) == 3)
        #expect(Self.attribute("data-width", of: "step", in: svg) == ["0.2500", "0.5000", "0.2500"])
        #expect(Self.attribute("fill", of: "job", in: svg) == ["rgb(17,34,51)", "rgb(255,149,0)", "rgb(48,176,199)"])
        #expect(Self.attribute("data-color", of: "step", in: svg) == ["#112233", "orange", "teal"])
        #expect(Self.attribute("data-fill", of: "step", in: svg) == ["1", "1", "0.5"])
        // The icon takes the accent colour.
        #expect(Self.attribute("fill", of: "icon", in: svg) == ["rgb(255,149,0)"])
    }

    @Test("the generic template draws one bar filled to progress, with the percentage")
    func genericBar() {
        let content: JSONValue = [
            "template": "generic", "state": "Build <b>", "progress": 0.25, "accent_color": "teal",
            "subtitle": "acme/widgets / CI",
        ]
        let svg = Self.render(content)
        #expect(svg.contains("data-style=\"bar\""))
        #expect(Self.count("step", in: svg) == 1)
        #expect(Self.attribute("data-fill", of: "step", in: svg) == ["0.25"])
        #expect(Self.attribute("data-color", of: "step", in: svg) == ["teal"])
        #expect(svg.contains(">25%<"))
        #expect(svg.contains("Build &lt;b&gt;") && !svg.contains("<b>"))
    }

    @Test("the live window is drawn only with live_progress and an end_date, with its ETA")
    func liveWindow() {
        var content = Self.matrix.objectValue!
        content["step_weights"] = [10, 60, 120, 20, 30]
        content["live_progress"] = true
        content["start_date"] = 1_000
        content["end_date"] = 1_120
        let live = Self.render(.object(content), now: 1_030)
        #expect(Self.count("live", in: live) == 3, "a striped overlay on each job of the current column")
        #expect(live.contains("-stripes)"))
        #expect(Self.count("eta", in: live) == 1)
        #expect(live.contains(">1:30</text>"))
        // The counter moves down beside the subtitle; the current column fills with time.
        #expect(Self.attribute("y", of: "counter", in: live) == ["51"])
        #expect(Self.attribute("data-fill", of: "step", in: live)[2] == "0.25")

        let withoutClock = Self.render(.object(content))
        #expect(Self.count("live", in: withoutClock) == 3)
        #expect(Self.count("eta", in: withoutClock) == 0)

        var noEnd = content
        noEnd["end_date"] = nil
        #expect(Self.count("live", in: Self.render(.object(noEnd), now: 1_030)) == 0)
        var notLive = content
        notLive["live_progress"] = false
        let still = Self.render(.object(notLive), now: 1_030)
        #expect(Self.count("live", in: still) == 0)
        #expect(Self.count("eta", in: still) == 0)
        #expect(Self.attribute("y", of: "counter", in: still) == ["33"])

        // An ended card shows everything complete and no window.
        let ended = Self.render(.object(content), isEnded: true, now: 1_030)
        #expect(Self.count("live", in: ended) == 0)
        #expect(Self.count("current", in: ended) == 0)
        #expect(Set(Self.attribute("data-fill", of: "step", in: ended)) == ["1"])
        #expect(ended.contains("data-ended=\"true\""))
    }

    @Test("an overrun window stops at full and counts hours as h:mm:ss")
    func etaFormat() {
        var content = Self.matrix.objectValue!
        content["live_progress"] = true
        content["start_date"] = 0
        content["end_date"] = 7_384
        #expect(Self.render(.object(content), now: 0).contains(">2:03:04</text>"))
        let overrun = Self.render(.object(content), now: 9_000)
        #expect(overrun.contains(">0:00</text>"))
        #expect(Self.attribute("data-fill", of: "step", in: overrun)[2] == "1")
    }

    @Test("text from the content is escaped")
    func escaping() {
        let content: JSONValue = [
            "template": "steps", "state": "<script>alert(1)</script>", "subtitle": "a & b \"quoted\" 'single'",
            "current_step": 1, "total_steps": 2, "progress": 0, "step_labels": ["<b>", "x&y"],
            "step_colors": ["\"><script>", ""],
        ]
        let svg = CardSVG.render(
            CardLayout(content: content.objectValue!), options: .init(id: "a\"b", buttons: ["Run <#1>"]))
        #expect(!svg.contains("<script>"))
        #expect(!svg.contains("<b>"))
        #expect(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(svg.contains("a &amp; b &quot;quoted&quot; &#39;single&#39;"))
        #expect(svg.contains(">&lt;b&gt;</text>"))
        #expect(svg.contains(">x&amp;y</text>"))
        #expect(svg.contains("data-color=\"&quot;&gt;&lt;script&gt;\""))
        #expect(svg.contains("id=\"a&quot;b-stripes\""))
        #expect(svg.contains(">Run &lt;#1&gt;</text>"))
        #expect(Markup.escaped("<&>\"'") == "&lt;&amp;&gt;&quot;&#39;")
    }

    @Test("buttons are drawn under the bar, and a long state is cut to fit")
    func buttonsAndClipping() {
        var content = Self.matrix.objectValue!
        content["state"] = .string(String(repeating: "Integration tests ", count: 6))
        let svg = CardSVG.render(
            CardLayout(content: content), options: .init(buttons: ["Run #42", "Commit"]))
        #expect(Self.count("button", in: svg) == 2)
        #expect(svg.contains(">Run #42</text>") && svg.contains(">Commit</text>"))
        let state = Self.attribute("font-size", of: "state", in: svg)
        #expect(state == ["16"])
        #expect(svg.contains("…</text>"))
        let placeholder = CardSVG.placeholder("Nothing <yet>")
        #expect(placeholder.contains("class=\"card placeholder\""))
        #expect(placeholder.contains(">Nothing &lt;yet&gt;</text>"))
    }
}
