import Foundation

/// How jobs fold into the steps of the card: jobs with the same base name are one step, drawn as a
/// column of parallel rows.
public enum JobGroupName {
    /// The job name without a reusable-workflow caller prefix and without a matrix suffix:
    /// `call / test (1.23)` → `test`, `build (ubuntu, 18)` → `build`, `lint` → `lint`.
    ///
    /// The callee name is what repeats across callers and matrix legs, so it is what the steps
    /// have in common; a name that would become empty is kept whole.
    public static func baseName(of jobName: String) -> String {
        var name = Substring(jobName).trimmingWhitespace()
        if let calleeStart = lastSeparatorEnd(in: name) {
            let callee = name[calleeStart...].trimmingWhitespace()
            if !callee.isEmpty { name = callee }
        }
        if name.hasSuffix(")"), let open = matchingOpenParenthesis(in: name) {
            let stripped = name[..<open].trimmingWhitespace()
            if !stripped.isEmpty { name = stripped }
        }
        return String(name)
    }

    /// Where the text after the last ` / ` starts, when there is one (found without Foundation,
    /// which on Linux goes through CFString for every job of every frame).
    private static func lastSeparatorEnd(in name: Substring) -> Substring.Index? {
        var index = name.endIndex
        while index > name.startIndex {
            index = name.index(before: index)
            guard name[index] == "/", index > name.startIndex else { continue }
            let before = name.index(before: index)
            let after = name.index(after: index)
            if name[before] == " ", after < name.endIndex, name[after] == " " { return name.index(after: after) }
        }
        return nil
    }

    /// The index of the `(` that balances the final `)`, when the name ends in one group.
    private static func matchingOpenParenthesis(in name: Substring) -> Substring.Index? {
        var depth = 0
        var index = name.endIndex
        while index > name.startIndex {
            index = name.index(before: index)
            switch name[index] {
            case ")": depth += 1
            case "(":
                depth -= 1
                if depth == 0 { return index }
            default: continue
            }
        }
        return nil
    }
}

extension Substring {
    func trimmingWhitespace() -> Substring {
        var result = self
        while let first = result.first, first.isWhitespace { result.removeFirst() }
        while let last = result.last, last.isWhitespace { result.removeLast() }
        return result
    }
}
