import Foundation

/// A page of the repository's `docs/`, read as the man pages are made from it: headings split it
/// into sections, and what the checks look for (options, table keys) is read off each section.
struct DocsPage {
    /// One heading and the lines under it up to the next heading of the same or a higher level.
    struct Section {
        var level: Int
        var title: String
        var lines: [String]
    }

    let lines: [String]

    /// `docs/<name>` of this checkout, found from this file's path (Tests/BridgeCoreTests/).
    init(_ name: String) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs").appendingPathComponent(name)
        try self.init(text: String(decoding: Data(contentsOf: url), as: UTF8.self))
    }

    init(text: String) {
        lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// The sections of `level` under the heading titled `parent` (one level up); headings inside
    /// fenced code blocks are text, not headings.
    func sections(level: Int, under parent: String) -> [Section] {
        var found: [Section] = []
        var inParent = false
        var inFence = false
        for line in lines {
            if line.hasPrefix("```") { inFence.toggle() }
            if !inFence, let (headingLevel, title) = Self.heading(line) {
                if headingLevel < level {
                    inParent = headingLevel == level - 1 && title == parent
                    continue
                }
                if headingLevel == level, inParent {
                    found.append(Section(level: level, title: title, lines: []))
                    continue
                }
            }
            if inParent, !found.isEmpty { found[found.count - 1].lines.append(line) }
        }
        return found
    }

    /// Every `--option` the lines name (`--no-color`, `--config=PATH` as `--config`).
    static func options(in lines: [String]) -> Set<String> {
        var options: Set<String> = []
        for line in lines {
            let scalars = Array(line.unicodeScalars)
            var index = 0
            while index + 2 < scalars.count {
                let before = index == 0 ? " " : scalars[index - 1]
                if scalars[index] == "-", scalars[index + 1] == "-",
                    CharacterSet.lowercaseLetters.contains(scalars[index + 2]),
                    !CharacterSet.alphanumerics.contains(before), before != "-"
                {
                    var end = index + 2
                    while end < scalars.count,
                        CharacterSet.lowercaseLetters.contains(scalars[end])
                            || CharacterSet.decimalDigits.contains(
                                scalars[end])
                            || scalars[end] == "-"
                    {
                        end += 1
                    }
                    options.insert(String(String.UnicodeScalarView(scalars[index..<end])))
                    index = end
                } else {
                    index += 1
                }
            }
        }
        return options
    }

    /// The first cell of every table row that is one code span: `| \`pushward.url\` | …` gives
    /// `pushward.url`.
    func tableKeys() -> Set<String> {
        var keys: Set<String> = []
        for line in lines where line.hasPrefix("| `") {
            let cell = line.dropFirst(3)
            guard let end = cell.firstIndex(of: "`") else { continue }
            let rest = cell[cell.index(after: end)...].drop { $0 == " " }
            if rest.hasPrefix("|") { keys.insert(String(cell[..<end])) }
        }
        return keys
    }

    private static func heading(_ line: String) -> (Int, String)? {
        let hashes = line.prefix { $0 == "#" }.count
        guard hashes > 0, line.dropFirst(hashes).hasPrefix(" ") else { return nil }
        return (hashes, String(line.dropFirst(hashes + 1)))
    }
}
