/// What differs between two texts, line by line, for a golden-file test's failure message: a
/// mismatch printed whole (two streams of JSON lines) hides the one line that changed.
public enum LineDiff {
    /// Each differing line as `-N expected` / `+N actual` (1-based), at most `limit` pairs, then
    /// how many more; empty when the texts are equal.
    public static func describe(expected: String, actual: String, limit: Int = 10) -> String {
        let old = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let new = actual.split(separator: "\n", omittingEmptySubsequences: false)
        var lines: [String] = []
        var differing = 0
        for index in 0..<max(old.count, new.count) {
            let left = index < old.count ? old[index] : nil
            let right = index < new.count ? new[index] : nil
            guard left != right else { continue }
            differing += 1
            guard differing <= limit else { continue }
            if let left { lines.append("-\(index + 1) \(left)") }
            if let right { lines.append("+\(index + 1) \(right)") }
        }
        if differing > limit { lines.append("(\(differing - limit) more differing lines)") }
        return lines.joined(separator: "\n")
    }
}
