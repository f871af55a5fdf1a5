/// The `alerts` section: off unless present; present and empty, failures and fixes on the
/// default branch (`AlertRule.onDefaultBranch`).
public struct AlertSettings: Sendable, Equatable {
    public var rules: [AlertRule]

    public init(rules: [AlertRule] = []) {
        self.rules = rules
    }

    public var isEnabled: Bool { !rules.isEmpty }

    /// The reasons `run` alerts for now, each with the level of the first rule that covers it (a
    /// run matching several rules alerts once per reason).
    public func alerts(for reasons: [AlertReason], _ run: AlertSubject) -> [(AlertReason, AlertRule.Level)] {
        reasons.compactMap { reason in
            rules.first { $0.matches(reason, run) }.map { (reason, $0.level) }
        }
    }

    /// The shortest `queued_after` of the rules that would cover `run`'s `queued` alert, however
    /// long it waits: when the engine's timer looks at the run again. Nil when no rule would.
    public func queuedAfter(for run: AlertSubject) -> UnixTime? {
        var waitedLong = run
        waitedLong.queuedFor = .infinity
        return rules.filter { $0.matches(.queued, waitedLong) }.map(\.queuedAfter).min()
    }
}
