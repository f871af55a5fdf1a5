/// Why a webhook delivery body could not be turned into a `WebhookEvent`.
///
/// Typed, with the field named as a dotted path (`workflow_job.steps[2].started_at`), because the
/// daemon answers GitHub with this text and logs it: whoever reads it in the hook's "Recent
/// Deliveries" page or in the log has to know what to fix without a debugger. An event the bridge
/// does not handle is not an error (see `WebhookEvent.unsupported`).
public enum WebhookDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The body (or the form's `payload` field) is empty.
    case emptyBody
    /// The `Content-Type` is neither JSON nor a URL-encoded form.
    case unsupportedContentType(String)
    /// A URL-encoded form body without the `payload` field GitHub puts the JSON in.
    case missingPayloadField
    /// The body is not well-formed JSON; the text says where the parser stopped.
    case invalidJSON(String)
    /// A required field is absent or `null`; the text is its dotted path.
    case missingField(String)
    /// A field is present but has the wrong type or format; `expected` says what it should be.
    case invalidField(String, expected: String)

    public var description: String {
        switch self {
        case .emptyBody:
            return "The webhook delivery has an empty body (or an empty 'payload' form field), so there is nothing "
                + "to decode; check that no proxy in front of the bridge strips request bodies, then redeliver it."
        case .unsupportedContentType(let contentType):
            return "The webhook was sent with content type '\(contentType)', which the bridge cannot read; set the "
                + "hook's content type to application/json (or application/x-www-form-urlencoded) in GitHub."
        case .missingPayloadField:
            return "The form-encoded webhook body has no 'payload' field, where GitHub puts the event JSON; check "
                + "that the sender is GitHub, or set the hook's content type to application/json."
        case .invalidJSON(let detail):
            return "The webhook body is not valid JSON (\(detail)); check that nothing between GitHub and the "
                + "bridge rewrites or truncates the body, then redeliver it."
        case .missingField(let path):
            return "The webhook payload has no value for the required field '\(path)'; the bridge cannot track "
                + "this delivery, so check that the event header matches the body and that the body is complete."
        case .invalidField(let path, let expected):
            return "The webhook payload field '\(path)' is not \(expected); check that the event header matches "
                + "the body and that nothing rewrites the payload."
        }
    }
}
