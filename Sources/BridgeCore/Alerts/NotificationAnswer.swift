/// What PushWard answered to `POST /notifications`.
public enum NotificationAnswer: Sendable, Equatable {
    /// 2xx: created. `delivery` is PushWard's `all`, `partial` or `none` and `reason` why not all
    /// (`no_apns_token`, `apns_rejected`, `push_disabled`); both nil when the body did not say.
    case sent(status: Int, id: Int64?, delivery: String?, reason: String?)
    case problem(PushWardProblem)
    case noAnswer(reason: String)
}
