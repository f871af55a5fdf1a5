/// One way a request breaks PushWard's contract (`spec/CONTRACT.md`): the field and the rule.
public struct ContractViolation: Sendable, Equatable, CustomStringConvertible {
    public var field: String
    public var rule: String

    public init(field: String, rule: String) {
        self.field = field
        self.rule = rule
    }

    public var description: String { "\(field): \(rule)" }
}
