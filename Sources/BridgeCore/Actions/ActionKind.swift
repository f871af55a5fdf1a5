/// One thing a button on a phone can ask GitHub to do to a run.
public enum ActionKind: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// `POST /repos/{o}/{r}/actions/runs/{id}/rerun-failed-jobs`: offered by a failed run.
    case rerun
    /// `POST …/runs/{id}/cancel`: offered while the run goes.
    case cancel
    /// `POST …/runs/{id}/pending_deployments` with `state: approved`: offered while a job waits
    /// for an environment's review.
    case approve
    /// The same call with `state: rejected`; offered beside `approve`, never alone.
    case reject

    public static func < (lhs: ActionKind, rhs: ActionKind) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// The button's title, on the card and in a notification (PushWard allows 64 and 24).
    public var title: String {
        switch self {
        case .rerun: "Re-run failed jobs"
        case .cancel: "Cancel"
        case .approve: "Approve"
        case .reject: "Reject"
        }
    }

    /// What the card says once the action was asked of GitHub: "Re-run requested by mona", or
    /// "… from a phone" when routing does not know who holds the phone.
    public func requested(by person: String?) -> String {
        let who = person.map { "by " + CardText.plain($0) } ?? "from a phone"
        switch self {
        case .rerun: return "Re-run requested \(who)"
        case .cancel: return "Cancel requested \(who)"
        case .approve: return "Approved \(who)"
        case .reject: return "Rejected \(who)"
        }
    }

    /// What the card says when GitHub refused it: "Re-run failed: …".
    public var failedHeadline: String {
        switch self {
        case .rerun: "Re-run failed"
        case .cancel: "Cancel failed"
        case .approve: "Approval failed"
        case .reject: "Rejection failed"
        }
    }
}
