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
}
