import BridgeCore

extension BridgeService {
    /// Whether the dispatcher should ask PushWard which activities it preempted (at start, and
    /// after an answer that suggests an eviction; at most every few seconds). Only the leader
    /// asks: what it learns changes cards.
    public func takePreemptedCheck(at now: UnixTime) -> Bool {
        guard lead.allows(.start) else { return false }
        return engine.takePreemptedCheck(at: now)
    }

    /// PushWard's list of preempted activities: the bridge's cards in it go to the summary card
    /// and are never patched as if showing (`BridgeEngine.observePreempted`).
    public func observePreempted(_ slugs: [String], at now: UnixTime) {
        guard lead.allows(.start) else { return }
        step("recording the preempted activities", at: now) { turn in
            turn.engine.observePreempted(Set(slugs), at: now)
            turn.wakesDispatcher = true
        }
    }
}
