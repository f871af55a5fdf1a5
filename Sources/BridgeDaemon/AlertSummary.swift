import BridgeCore
import BridgeStore
import Foundation

/// One alert in words, the same in `explain`, `runs show` and on the status page: which reason,
/// what it said, to whom, and what became of it. Plain text with payload-made names in it: each
/// place escapes it for where it lands.
public enum AlertSummary {
    /// Who an alert reaches: the routing target its body carries, else everyone the key reaches.
    public static func audience(_ alert: AlertRecord) -> String {
        guard let target = (try? JSONValue(parsing: Data(alert.body.utf8)))?["target"] else {
            return "everyone the key reaches"
        }
        func names(_ key: String) -> [String] { target[key]?.arrayValue?.compactMap(\.stringValue) ?? [] }
        return ActivityTarget(members: names("members"), groups: names("groups"), tags: names("tags")).description
    }

    public static func sentence(_ alert: AlertRecord) -> String {
        let what = "The \(alert.reason.rawValue) alert “\(alert.title)”"
        switch alert.state {
        case .sent:
            let at = alert.sentAt.map { GitHubTimestamp.format($0) } ?? "an unknown time"
            var sentence = "\(what) went to \(audience(alert)) at \(at)"
            if let delivery = alert.delivery { sentence += " (PushWard: \(delivery))" }
            if alert.attempts > 1 { sentence += " after \(alert.attempts) attempts" }
            return sentence + "."
        case .pending:
            guard alert.attempts > 0 else { return "\(what) is recorded and about to be sent." }
            let why = alert.detail.map { ": \($0)" } ?? ""
            return "\(what) is not sent yet (attempt \(alert.attempts)\(why)); next try at "
                + "\(GitHubTimestamp.format(alert.nextAttemptAt))."
        case .failed:
            return "\(what) was not sent: \(alert.detail ?? "refused")."
        }
    }
}
