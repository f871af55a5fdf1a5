import BridgeCore
import BridgeStore

/// A press that found a live token and a run where the action makes sense: recorded as
/// `requested`, to be asked of GitHub and finished with `finishPress`.
public struct ActionPress: Sendable, Equatable {
    public var id: Int64
    public var binding: ActionBinding
    /// Who pressed, as the audit names them: the routed person, the routing target, or everyone
    /// the key reaches.
    public var person: String
}
