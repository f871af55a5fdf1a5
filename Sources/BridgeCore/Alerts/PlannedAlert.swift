/// A notification the core wants sent for a run: `POST /notifications` with `body`, once per run
/// and reason (the store keeps it unique on repository, run id and reason).
public struct PlannedAlert: Sendable, Equatable {
    public var run: RunKey
    public var reason: AlertReason
    /// The request body, already within PushWard's limits (`AlertContent`).
    public var body: JSONValue
    /// The run's card: named in `activity_slug` when the alert is sent, if PushWard has it by
    /// then; nil when the run draws on no card.
    public var activitySlug: String?
    /// Who this copy is for, when a run's reason goes to several people: a review's approver
    /// (`Reviewer.recipient`); empty for the one alert of a reason. One row per run, reason and
    /// recipient.
    public var recipient: String

    public init(run: RunKey, reason: AlertReason, body: JSONValue, activitySlug: String?, recipient: String = "") {
        self.run = run
        self.reason = reason
        self.body = body
        self.activitySlug = activitySlug
        self.recipient = recipient
    }
}
