/// What became of one delivery in the core. "Ignored" is an answer, not an error: it is recorded
/// with its reason and shown to maintainers.
public enum DeliveryOutcome: Sendable, Equatable {
    /// It moved (or confirmed) the state of this run.
    case applied(RunKey)
    /// Deliberately not acted on, and why (unsupported event, filtered out, an action we do not use).
    case ignored(reason: String)
    /// A `ping`; `warning` says what the hook lacks when it does not send both events we need.
    case ping(warning: String?)
}
