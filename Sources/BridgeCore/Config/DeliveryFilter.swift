/// Which deliveries the bridge acts on. Each list is optional: an empty `include` lets everything
/// in, `exclude` wins over `include`. A delivery filtered out is recorded as ignored with the
/// reason this returns.
public struct DeliveryFilter: Sendable, Equatable {
    public struct Rule: Sendable, Equatable {
        public var include: [GlobPattern]
        public var exclude: [GlobPattern]

        public init(include: [GlobPattern] = [], exclude: [GlobPattern] = []) {
            self.include = include
            self.exclude = exclude
        }

        /// Nil when `value` passes; else why not. A value the payload does not carry passes, since
        /// legacy payloads lack fields and dropping them would lose runs silently.
        func rejection(of value: String?, what: String) -> String? {
            guard let value else { return nil }
            if let pattern = exclude.first(where: { $0.matches(value) }) {
                return "\(what) \(value) matches exclude pattern \(pattern)"
            }
            if !include.isEmpty, !include.contains(where: { $0.matches(value) }) {
                return "\(what) \(value) matches no include pattern"
            }
            return nil
        }
    }

    public var repositories = Rule()
    public var workflows = Rule()
    public var branches = Rule()
    /// The run's trigger (`push`, `pull_request`, `schedule`, …).
    public var events = Rule()
    /// Whether a fork's run draws a card and moves widgets (`filters.forks`, default true). Not a
    /// delivery filter: the delivery is applied and alerts follow their own rules; only the card
    /// and widgets are withheld (`CardWithholding`), since the names the other rules match are
    /// the fork author's to choose.
    public var forks = true

    public init() {}

    /// Nil when a delivery about this run passes every rule; else the first reason it does not.
    public func rejection(repository: String, workflow: String?, branch: String?, event: String?) -> String? {
        repositories.rejection(of: repository, what: "repository")
            ?? workflows.rejection(of: workflow, what: "workflow")
            ?? branches.rejection(of: branch, what: "branch")
            ?? events.rejection(of: event, what: "event")
    }
}
