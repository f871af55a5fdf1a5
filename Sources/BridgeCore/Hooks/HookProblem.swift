/// Something about a webhook that keeps the bridge from getting or verifying what it needs, each
/// with its fix (`HookPlan`).
public enum HookProblem: Sendable, Hashable, CustomStringConvertible {
    /// No hook posts to the bridge's URL.
    case missing
    /// GitHub sends nothing while a hook is inactive.
    case inactive
    /// The hook does not send this event (`workflow_job` or `workflow_run`).
    case missingEvent(String)
    /// The hook sends every event (`*`): each push, issue and comment reaches the bridge, which
    /// verifies and answers all of them for nothing, and keeps a record of each.
    case tooWide
    /// `application/x-www-form-urlencoded`: the bridge reads it, but JSON is what it is set up for
    /// and what GitHub's redelivery and the delivery log show plainly.
    case formContentType
    /// `insecure_ssl: "1"`: GitHub would post the deliveries to whoever answers on the address.
    case skipsTLSVerification
    /// No secret: nothing GitHub sends can be verified, and the bridge refuses every delivery.
    case noSecret
    /// The most recent delivery was not accepted (its status, 0 when nothing answered).
    case lastDeliveryFailed(status: Int)

    /// A stable name for `--json`: `missing`, `inactive`, `missing_event:workflow_run`, …
    public var code: String {
        switch self {
        case .missing: "missing"
        case .inactive: "inactive"
        case .missingEvent(let event): "missing_event:" + event
        case .tooWide: "too_wide"
        case .formContentType: "form_content_type"
        case .skipsTLSVerification: "insecure_ssl"
        case .noSecret: "no_secret"
        case .lastDeliveryFailed: "last_delivery_failed"
        }
    }

    public var description: String {
        switch self {
        case .missing: "no hook posts to this URL"
        case .inactive: "the hook is inactive: GitHub sends it nothing"
        case .missingEvent(let event): "the hook does not send \(event) events"
        case .tooWide: "the hook sends every event (*): the bridge needs only workflow_job and workflow_run"
        case .formContentType: "the hook posts a form (content type form), not JSON"
        case .skipsTLSVerification: "the hook skips TLS certificate verification (insecure_ssl 1)"
        case .noSecret: "the hook has no secret: the bridge cannot verify, and refuses, what it sends"
        case .lastDeliveryFailed(let status):
            status == 0
                ? "its most recent delivery reached nothing (no answer from the URL)"
                : "its most recent delivery was answered \(status)"
        }
    }
}
