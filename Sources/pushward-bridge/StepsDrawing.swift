import BridgeCore

/// The steps bar in the terminal: one column per step, a row per parallel job (up to 10), filled
/// for finished jobs, `▶` on the current step.
enum StepsDrawing {
    static func draw(plan: StepPlan, currentStep: Int) -> String {
        guard !plan.groups.isEmpty else { return "(no steps yet)" }
        let maxRows = plan.groups.map(\.rows).max() ?? 1
        var lines: [String] = []
        for row in 0..<maxRows {
            var line = ""
            for (index, group) in plan.groups.enumerated() {
                guard row < group.rows else {
                    line += "   "
                    continue
                }
                let finished = row < min(group.rows, group.finishedJobCount)
                let symbol = group.hasFailure && row == 0 ? "✗" : finished ? "■" : index + 1 == currentStep ? "▣" : "□"
                line += " \(symbol) "
            }
            lines.append(line)
        }
        var labels = ""
        for (index, group) in plan.groups.enumerated() {
            labels +=
                (index + 1 == currentStep ? "▶" : " ")
                + String(index + 1).padding(toLength: 2, withPad: " ", startingAt: 0)
            _ = group
        }
        lines.append(labels)
        let names = plan.groups.enumerated().map { "\($0.offset + 1) \($0.element.name)" }.joined(separator: "  ")
        lines.append(names)
        return lines.joined(separator: "\n")
    }
}
