import Foundation

/// What a failure alert quotes of the failed job's check-run annotations: the first at level
/// `failure` that is not GitHub's own closing line ("Process completed with exit code 1."), which
/// every failed step has and which says nothing of the error. `path:line: message`, the message's
/// first line, made plain and clamped like all text a workflow's author chooses (`CardText`).
public enum AnnotationQuote {
    /// The longest quote, in runes: a line on the notification, not the log.
    public static let limit = 300

    /// The quote of `annotations` (GitHub's JSON objects, in GitHub's order); nil when none is worth it.
    public static func first(of annotations: [JSONValue]) -> String? {
        for annotation in annotations where annotation["annotation_level"]?.stringValue == "failure" {
            let message =
                (annotation["message"]?.stringValue ?? "").split(whereSeparator: \.isNewline).first
                .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard !message.isEmpty, !isClosingLine(message) else { continue }
            var place = annotation["path"]?.stringValue ?? ""
            // GitHub's own annotations name the workflow file, `.github`, with no useful line.
            if place == ".github" { place = "" }
            if !place.isEmpty, let line = annotation["start_line"]?.intValue, line > 0 { place += ":\(line)" }
            let text = place.isEmpty ? message : "\(place): \(message)"
            return CardText.clamp(CardText.plain(text), to: limit)
        }
        return nil
    }

    /// GitHub's line at the end of every failed step: `Process completed with exit code N.`
    static func isClosingLine(_ message: String) -> Bool {
        message.hasPrefix("Process completed with exit code ")
    }
}
