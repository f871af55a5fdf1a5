import BridgeTestSupport
import Testing

/// A golden-file mismatch names the lines that differ, not two whole streams.
@Suite("line diff")
struct LineDiffTests {
    @Test("only the differing lines, numbered; extra lines on either side; equal texts say nothing")
    func differingLines() {
        #expect(LineDiff.describe(expected: "a\nb\nc", actual: "a\nb\nc").isEmpty)
        #expect(LineDiff.describe(expected: "a\nb\nc", actual: "a\nB\nc") == "-2 b\n+2 B")
        #expect(LineDiff.describe(expected: "a", actual: "a\nz") == "+2 z")
        let many = LineDiff.describe(
            expected: (1...30).map(String.init).joined(separator: "\n"), actual: "", limit: 3)
        #expect(many.hasSuffix("(27 more differing lines)"))
    }
}
