import BridgeCore
import Foundation

/// Plain aligned columns for terminal listings.
enum Table {
    /// Every cell goes through `TerminalText.sanitized`: the cells are names from payloads, and a
    /// table is only ever printed to a terminal or a pipe.
    static func render(header: [String], rows: [[String]]) -> String {
        let all = ([header] + rows).map { $0.map(TerminalText.sanitized) }
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingTrailingSpaces()
        }.joined(separator: "\n")
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var result = self
        while result.last == " " { result.removeLast() }
        return result
    }
}
