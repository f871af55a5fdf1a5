import Testing

@testable import BridgeCore

@Suite("Card layout")
struct CardLayoutTests {
    @Test("matrix: equal columns, rows from step_rows, steps before the current one full")
    func matrix() {
        let layout = CardLayout(content: [
            "total_steps": 4, "current_step": 3, "progress": 0.4, "step_rows": [1, 3, 2, 1], "accent_color": "blue",
            "state": "Test 1/2",
        ])
        #expect(layout.style == .matrix)
        #expect(layout.segments.map(\.rows) == [1, 3, 2, 1])
        #expect(layout.segments.map(\.width) == [0.25, 0.25, 0.25, 0.25])
        #expect(layout.segments.map(\.fill) == [1, 1, 0.5, 0])
        #expect(layout.segments.map(\.isCurrent) == [false, false, true, false])
        #expect(layout.counter == "3/4")
        #expect(layout.segments.allSatisfy { $0.color == "blue" })
    }

    @Test("weighted matrix: widths proportional to weights, the current column filled to progress")
    func weightedMatrix() {
        let layout = CardLayout(content: [
            "total_steps": 3, "current_step": 2, "progress": 0.25, "step_rows": [1, 4, 1],
            "step_weights": [10, 30, 10],
            "step_colors": ["purple", "", "green"], "accent_color": "teal",
        ])
        #expect(layout.style == .weightedMatrix)
        #expect(layout.segments.map(\.width) == [0.2, 0.6, 0.2])
        #expect(layout.segments.map(\.x) == [0, 0.2, 0.8])
        #expect(layout.segments.map(\.fill) == [1, 0.25, 0])
        #expect(layout.segments.map(\.color) == ["purple", "teal", "green"])
        #expect(layout.segments[1].rows == 4)
    }

    @Test("segmented: one row per step; an ended card is drawn complete; a live window is read")
    func segmentedAndLive() {
        let content: [String: JSONValue] = [
            "total_steps": 2, "current_step": 1, "progress": 0, "step_weights": [1, 3], "live_progress": true,
            "start_date": 100, "end_date": 160,
        ]
        let live = CardLayout(content: content)
        #expect(live.style == .segmented)
        #expect(live.segments.map(\.rows) == [1, 1])
        #expect(live.liveUntil == 160)
        #expect(live.liveFrom == 100)
        let ended = CardLayout(content: content, isEnded: true)
        #expect(ended.segments.allSatisfy { $0.fill == 1 })
    }

    @Test("arrays whose length disagrees with total_steps are ignored, as the phone ignores them")
    func mismatchedArrays() {
        let layout = CardLayout(content: ["total_steps": 3, "current_step": 0, "progress": 0, "step_rows": [2, 2]])
        #expect(layout.segments.map(\.rows) == [1, 1, 1])
    }

    @Test("colours: named ones as iOS draws them, hex as written, anything else the default blue")
    func colors() {
        #expect(CardLayout.rgb("red") == (255, 59, 48))
        #expect(CardLayout.rgb("#8E8E93") == (142, 142, 147))
        #expect(CardLayout.rgb("#11223344") == (17, 34, 51))
        #expect(CardLayout.rgb("nonsense") == (0, 122, 255))
    }
}
