import BridgeCore
import BridgeStore
import Foundation

/// One press of a button in words and as JSON, the same in `explain`, `runs show`, the admin
/// API and the status page: what was asked, by whom, from where, and GitHub's answer. Plain text
/// with names from payloads and GitHub in it: each place escapes it for where it lands.
public enum ActionSummary {
    /// What was asked, as a person says it: "a re-run of the failed jobs", "an approval of prod".
    public static func what(_ record: ActionRecord) -> String {
        let environment = record.environment.map { $0.isEmpty ? "" : " of \($0)" } ?? ""
        switch record.kind {
        case .rerun: return "a re-run of the failed jobs"
        case .cancel: return "a cancel"
        case .approve: return "an approval" + environment
        case .reject: return "a rejection" + environment
        }
    }

    /// What became of the press.
    public static func outcome(_ record: ActionRecord) -> String {
        let why = record.detail.map { ": \($0)" } ?? ""
        switch record.state {
        case .requested: return "GitHub is being asked"
        case .done: return "GitHub took it"
        case .refused:
            return "GitHub refused it" + (record.githubStatus.map { " (\($0))" } ?? "") + why
        case .notApplicable: return "nothing was done" + why
        case .interrupted: return "cut off" + why
        }
    }

    public static func sentence(_ record: ActionRecord) -> String {
        "At \(GitHubTimestamp.format(record.pressedAt)) \(record.person) asked for \(what(record)) of attempt "
            + "\(record.run.attempt) from the \(record.surface); \(outcome(record))."
    }

    public static func json(_ record: ActionRecord) -> JSONValue {
        [
            "action": .string(record.kind.rawValue), "repository": .string(record.run.repository),
            "run_id": .number(Double(record.run.runID)), "attempt": .number(Double(record.run.attempt)),
            "environment": record.environment.map { .string($0) } ?? .null, "person": .string(record.person),
            "surface": .string(record.surface), "pressed_at": .string(GitHubTimestamp.format(record.pressedAt)),
            "state": .string(record.state.rawValue),
            "github_status": record.githubStatus.map { .number(Double($0)) } ?? .null,
            "detail": record.detail.map { .string($0) } ?? .null,
            "finished_at": record.finishedAt.map { .string(GitHubTimestamp.format($0)) } ?? .null,
            // Which instance asked GitHub: with several, the one whose log says the rest.
            "instance": record.instance.map { .string($0) } ?? .null,
        ]
    }
}
