/// Who a run's Approve and Reject go to: each approver its own notification with tokens of its
/// own, so the record of a press says whose token it was (`actions.rules[].approvers`).
///
/// Never the run's own actor (GitHub's "prevent self-review"): the person who pushed, and the one
/// who started this attempt, are left out. With routing each approver is reached through their
/// PushWard member (`routing.members`), and one without a member is not reached at all; without
/// routing the notification goes to everyone the key reaches, which is right only when the key
/// belongs to one of the approvers (`check-config` says so in a warning): then one notification
/// stands for them all.
public struct Reviewer: Sendable, Equatable {
    /// The approver's GitHub login (lower-cased); nil for the one notification that, without
    /// routing, stands for every approver.
    public var login: String?
    /// Their PushWard member, with routing; nil without.
    public var target: ActivityTarget?
    /// The approvers that notification stands for (its `login` alone when it has one).
    public var approvers: [String]

    public init(login: String?, target: ActivityTarget?, approvers: [String]) {
        self.login = login
        self.target = target
        self.approvers = approvers
    }

    /// What an alert row and a token's recipient record: the login, or who the key must belong to.
    public var recipient: String {
        login ?? "the key's owner, one of " + approvers.joined(separator: ", ")
    }

    /// The reviewers of `run` under `rule`'s approvers: none when every approver is the run's own
    /// actor, or (with routing) has no PushWard member.
    public static func of(
        _ state: RunState, approvers: [String], routing: RoutingSettings
    ) -> [Reviewer] {
        let own = Set(
            [state.run?.actor, state.run?.triggeringActor, state.jobMetadata?.sender].compactMap {
                $0?.lowercased()
            })
        let eligible = Array(Set(approvers.map { $0.lowercased() }).subtracting(own)).sorted()
        guard !eligible.isEmpty else { return [] }
        guard routing.isEnabled else { return [Reviewer(login: nil, target: nil, approvers: eligible)] }
        return eligible.compactMap { login in
            routing.members[login].map {
                Reviewer(login: login, target: ActivityTarget(members: [$0]), approvers: [login])
            }
        }
    }
}
