import BridgeCore

/// The card in the terminal, as the phone would draw it: a header with the counter and the
/// state, the steps bar (matrix columns stacked, widths from weights, the current step filling),
/// the labels, and the live window. ANSI 24-bit colour, or plain characters.
///
/// The state, subtitle and labels are job, workflow and repository names: they are sanitized
/// (`TerminalText`) before the drawing adds its own colour sequences, which are then the only
/// escape sequences in the output.
struct CardTerminalDrawing {
    var layout: CardLayout
    var colored: Bool
    /// Characters across the bar.
    var width = 60

    func render(now: UnixTime) -> String {
        var lines: [String] = []
        let header = TerminalText.sanitized("\(layout.counter)  \(layout.state)")
        lines.append(paint(header, layout.accentColor, bold: true))
        if let subtitle = layout.subtitle { lines.append(dim(TerminalText.sanitized(subtitle))) }
        let columns = columnWidths()
        let rows = layout.segments.map(\.rows).max() ?? 1
        for row in 0..<rows {
            var line = ""
            for (segment, columnWidth) in zip(layout.segments, columns) {
                guard row < segment.rows else {
                    line += String(repeating: " ", count: columnWidth + 1)
                    continue
                }
                let filled = Int((Double(columnWidth) * segment.fill).rounded())
                let solid = String(repeating: "█", count: filled)
                let empty = String(repeating: segment.isCurrent ? "▒" : "░", count: columnWidth - filled)
                line += paint(solid, segment.color) + dim(empty) + " "
            }
            lines.append(line)
        }
        var marker = ""
        for (segment, columnWidth) in zip(layout.segments, columns) {
            let text = segment.isCurrent ? "▲" : ""
            marker += text + String(repeating: " ", count: max(0, columnWidth + 1 - text.count))
        }
        if layout.currentStep > 0 { lines.append(marker) }
        if layout.totalSteps <= 6 {
            var labels = ""
            for (segment, columnWidth) in zip(layout.segments, columns) {
                let label = String(TerminalText.sanitized(segment.label ?? "").prefix(columnWidth))
                labels += label + String(repeating: " ", count: columnWidth + 1 - label.count)
            }
            lines.append(dim(labels))
        }
        var facts = ["\(layout.style.rawValue) layout", "progress \(Int((layout.progress * 100).rounded()))%"]
        if let until = layout.liveUntil {
            let remaining = Int(until - now)
            facts.append(remaining > 0 ? "live window: \(remaining) s left" : "live window: overran, held full")
        }
        if layout.isEnded { facts.append("ended") }
        lines.append(dim(facts.joined(separator: " · ")))
        return lines.joined(separator: "\n")
    }

    /// Each column's characters: proportional to its width, at least 1.
    func columnWidths() -> [Int] {
        let usable = max(layout.segments.count, width - layout.segments.count)
        return layout.segments.map { max(1, Int((Double(usable) * $0.width).rounded())) }
    }

    func paint(_ text: String, _ color: String, bold: Bool = false) -> String {
        guard colored, !text.isEmpty else { return text }
        let (red, green, blue) = CardLayout.rgb(color)
        return "\u{1B}[\(bold ? "1;" : "")38;2;\(red);\(green);\(blue)m" + text + "\u{1B}[0m"
    }

    func dim(_ text: String) -> String {
        guard colored, !text.isEmpty else { return text }
        return "\u{1B}[2m" + text + "\u{1B}[0m"
    }
}
