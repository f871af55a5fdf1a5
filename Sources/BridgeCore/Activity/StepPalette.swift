/// The tint of a step by the kind of job it is, so a glance tells tests from deploys.
public enum StepPalette {
    /// Named PushWard colours; `""` falls back to the card's accent colour.
    static let kinds: [(color: String, keywords: [String])] = [
        ("orange", ["security", "codeql", "scan", "audit", "vuln", "trivy", "snyk", "sast"]),
        ("purple", ["lint", "format", "style", "pre-commit", "precommit", "check", "clippy", "vet", "typecheck"]),
        ("cyan", ["docker", "image", "container", "buildx"]),
        ("green", ["deploy", "release", "publish", "ship", "rollout"]),
        ("yellow", ["test", "spec", "e2e", "coverage", "integration"]),
        ("blue", ["build", "compile", "package", "bundle", "make"]),
    ]

    public static let failed = "red"

    /// The colour of a step named `name`; `""` for a kind the palette does not know. The keyword
    /// that comes first in the name decides: `docker-build` is a docker step, `test-build` a test.
    public static func color(forStepNamed name: String) -> String {
        // A byte search: this runs for every step of every frame, and Foundation's `range(of:)`
        // goes through CFString on Linux, which made it a fifth of the daemon's time.
        let lowered = Array(name.lowercased().utf8)
        var best: (color: String, position: Int)?
        for kind in kinds {
            for keyword in kind.keywords {
                guard let position = firstOffset(of: keyword, in: lowered) else { continue }
                if best.map({ position < $0.position }) ?? true { best = (kind.color, position) }
            }
        }
        return best?.color ?? ""
    }

    /// The offset of `needle`'s first occurrence in `haystack`, or nil.
    static func firstOffset(of needle: String, in haystack: [UInt8]) -> Int? {
        let pattern = Array(needle.utf8)
        guard !pattern.isEmpty, pattern.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - pattern.count) where haystack[start] == pattern[0] {
            var matched = true
            for offset in 1..<pattern.count where haystack[start + offset] != pattern[offset] {
                matched = false
                break
            }
            if matched { return start }
        }
        return nil
    }
}
