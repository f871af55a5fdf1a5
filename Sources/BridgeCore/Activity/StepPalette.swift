import Foundation

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
        let lowered = name.lowercased()
        let hits = kinds.compactMap { kind -> (String, String.Index)? in
            let positions = kind.keywords.compactMap { lowered.range(of: $0)?.lowerBound }
            return positions.min().map { (kind.color, $0) }
        }
        return hits.min { $0.1 < $1.1 }?.0 ?? ""
    }
}
