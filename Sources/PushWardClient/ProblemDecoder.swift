import BridgeCore
import Foundation

/// Reads a PushWard error body: an RFC 9457 problem (`code`, `detail`, `retry_after_ms`,
/// `reset_at`, and a quota refusal's `kind`, `used`, `limit`) or the legacy `{"error": "…"}`; whatever it cannot read it leaves nil.
public enum ProblemDecoder {
    /// `now` turns a `Retry-After` given as an HTTP date into seconds from now.
    public static func decode(
        status: Int, body: Data, retryAfterHeader: String?, now: UnixTime = Date().timeIntervalSince1970
    ) -> PushWardProblem {
        var problem = PushWardProblem(status: status)
        problem.retryAfter = retryAfterHeader.flatMap { retryAfterSeconds($0, now: now) }
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
        let locations = (object["errors"]?.arrayValue ?? []).compactMap { $0["location"]?.stringValue }
        if !locations.isEmpty { problem.fieldLocations = locations }
        // Only a quota refusal's: another problem may use these generic names for something else.
        if problem.code == "quota.exceeded" {
            problem.quotaKind = object["kind"]?.stringValue
            problem.quotaUsed = object["used"]?.intValue
            problem.quotaLimit = object["limit"]?.intValue
        }
        return problem
    }

    /// `Retry-After` (RFC 9110, section 10.2.3): delay-seconds, or an HTTP date, which counts from
    /// `now` (a date already past means "now": 0). Nil for anything else, so a garbled header
    /// falls back to the caller's own backoff instead of a made-up wait.
    static func retryAfterSeconds(_ header: String, now: UnixTime) -> Double? {
        let text = header.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return Double(text)
        }
        guard let date = httpDate(text) else { return nil }
        return max(0, date - now)
    }

    /// An HTTP date in the preferred IMF-fixdate form (`Sun, 06 Nov 1994 08:49:37 GMT`), or one of
    /// the two obsolete forms recipients must still accept (RFC 850 and asctime).
    static func httpDate(_ text: String) -> UnixTime? {
        for format in ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text.replacingOccurrences(of: "  ", with: " ")) {
                return date.timeIntervalSince1970
            }
        }
        return nil
    }

    /// RFC 3339 (`2026-12-01T00:00:00Z`, fractions and offsets allowed), as GitHub's parser reads it.
    static func parseTimestamp(_ text: String) -> UnixTime? {
        GitHubTimestamp.parse(text)
    }
}
