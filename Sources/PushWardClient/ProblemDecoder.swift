import BridgeCore
import Foundation

/// Reads a PushWard error body: an RFC 9457 problem (`code`, `detail`, `retry_after_ms`,
/// `reset_at`, and a quota refusal's `kind`, `used`, `limit`) or the legacy `{"error": "…"}`; whatever it cannot read it leaves nil.
public enum ProblemDecoder {
    public static func decode(status: Int, body: Data, retryAfterHeader: String?) -> PushWardProblem {
        var problem = PushWardProblem(status: status)
        if let header = retryAfterHeader?.trimmingCharacters(in: .whitespaces), let seconds = Double(header),
            seconds >= 0
        {
            problem.retryAfter = seconds
        }
        guard let object = (try? JSONValue(parsing: body))?.objectValue else {
            let text = String(decoding: body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            problem.detail = text.isEmpty ? nil : text
            return problem
        }
        problem.code = object["code"]?.stringValue ?? (object["error"]?.objectValue?["code"]?.stringValue)
        problem.detail =
            object["detail"]?.stringValue ?? object["error"]?.stringValue ?? object["message"]?.stringValue
            ?? object["title"]?.stringValue
        if let milliseconds = object["retry_after_ms"]?.doubleValue, milliseconds >= 0 {
            problem.retryAfter = max(problem.retryAfter ?? 0, milliseconds / 1000)
        }
        if let reset = object["reset_at"] {
            problem.resetAt = reset.doubleValue ?? reset.stringValue.flatMap(parseTimestamp)
        }
        // Only a quota refusal's: another problem may use these generic names for something else.
        if problem.code == "quota.exceeded" {
            problem.quotaKind = object["kind"]?.stringValue
            problem.quotaUsed = object["used"]?.intValue
            problem.quotaLimit = object["limit"]?.intValue
        }
        return problem
    }

    /// RFC 3339 (`2026-12-01T00:00:00Z`, fractions and offsets allowed), as GitHub's parser reads it.
    static func parseTimestamp(_ text: String) -> UnixTime? {
        GitHubTimestamp.parse(text)
    }
}
