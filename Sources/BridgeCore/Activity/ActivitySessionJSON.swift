import Foundation

/// A card's session as the store keeps it, written field by field instead of through `Encodable`.
///
/// Every group commit writes each card it touched, and through `JSONEncoder` that was 12 % of the
/// daemon's CPU at 1,000 deliveries a second, most of it the acknowledged content (a `JSONValue`
/// tree) going through the protocol's dynamic dispatch; this writes it about 15 times as fast
/// (`dispatch-bench --stored-json`, the figures in `JSONByteBuffer`'s comment). The text says what
/// `JSONEncoder` says for the same value (keys in declaration order rather than sorted, `nil` left
/// out), and it is read back with `JSONDecoder` like any other stored value.
/// `ActivitySessionRoundTripTests` fails when a stored property is added without being written
/// here.
public enum ActivitySessionJSON {
    /// The JSON text, or nil when a time in the session is not finite (JSON has no NaN): the
    /// caller then encodes it generically, which reports where.
    public static func text(of session: ActivitySession) -> String? {
        var output = JSONByteBuffer(capacity: 2_048)
        guard write(session, to: &output) else { return nil }
        return output.string
    }

    private static func write(_ session: ActivitySession, to out: inout JSONByteBuffer) -> Bool {
        out.append(UInt8(ascii: "{"))
        var object = JSONObjectWriter()
        object.key("identity", &out)
        write(session.identity, to: &out)
        if let owner = session.owner {
            object.key("owner", &out)
            RunStateJSON.write(owner, to: &out)
        }
        object.string("phase", session.phase.rawValue, &out)
        if let acknowledged = session.acknowledged {
            object.key("acknowledged", &out)
            write(acknowledged, to: &out)
        }
        guard object.number("lastPatchAt", session.lastPatchAt, &out),
            object.number("finalShownAt", session.finalShownAt, &out),
            object.number("retryAt", session.retryAt, &out)
        else { return false }
        object.integer("failures", session.failures, &out)
        if let body = session.rejectedBody {
            object.key("rejectedBody", &out)
            // Inside the session's object: one level of the depth `JSONValue` writes at most.
            body.write(to: &out, depth: 1)
        }
        object.bool("needsFullFrame", session.needsFullFrame, &out)
        if let dropped = session.droppedFields {
            object.key("droppedFields", &out)
            out.append(UInt8(ascii: "{"))
            var fields = JSONObjectWriter()
            for (field, problem) in dropped.sorted(by: { $0.key < $1.key }) { fields.string(field, problem, &out) }
            out.append(UInt8(ascii: "}"))
        }
        object.string("lastProblem", session.lastProblem, &out)
        guard object.number("lastProblemAt", session.lastProblemAt, &out),
            object.number("pendingSince", session.pendingSince, &out)
        else { return false }
        object.string("fidelity", session.fidelity?.rawValue, &out)
        if let updates = session.recentUpdates {
            object.key("recentUpdates", &out)
            out.append(UInt8(ascii: "["))
            for (index, at) in updates.enumerated() {
                guard at.isFinite else { return false }
                if index > 0 { out.append(JSONByteBuffer.comma) }
                out.appendFiniteDouble(at)
            }
            out.append(UInt8(ascii: "]"))
        }
        object.integer("totalUpdates", session.totalUpdates, &out)
        object.integer("acknowledgedStep", session.acknowledgedStep, &out)
        guard object.number("endedAt", session.endedAt, &out),
            object.number("deletionRequestedAt", session.deletionRequestedAt, &out),
            object.number("deletedAt", session.deletedAt, &out)
        else { return false }
        if let waits = session.waitsForRoom { object.bool("waitsForRoom", waits, &out) }
        if let identity = session.serverIdentity {
            object.key("serverIdentity", &out)
            write(identity, to: &out)
        }
        if let reused = session.reused { object.bool("reused", reused, &out) }
        object.integer("priority", session.priority, &out)
        out.append(UInt8(ascii: "}"))
        return true
    }

    private static func write(_ identity: ActivityIdentity, to out: inout JSONByteBuffer) {
        out.append(UInt8(ascii: "{"))
        var fields = JSONObjectWriter()
        fields.string("slug", identity.slug, &out)
        fields.string("name", identity.name, &out)
        if let target = identity.target {
            fields.key("target", &out)
            out.append(UInt8(ascii: "{"))
            var lists = JSONObjectWriter()
            for (name, values) in [("members", target.members), ("groups", target.groups), ("tags", target.tags)] {
                lists.key(name, &out)
                out.append(UInt8(ascii: "["))
                for (index, value) in values.enumerated() {
                    if index > 0 { out.append(JSONByteBuffer.comma) }
                    out.appendString(value)
                }
                out.append(UInt8(ascii: "]"))
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "}"))
    }

    private static func write(_ activity: StoredActivity, to out: inout JSONByteBuffer) {
        out.append(UInt8(ascii: "{"))
        var fields = JSONObjectWriter()
        fields.string("state", activity.state, &out)
        fields.key("content", &out)
        // Inside the session's object and this one's.
        JSONValue.object(activity.content).write(to: &out, depth: 2)
        fields.string("name", activity.name, &out)
        fields.integer("priority", activity.priority, &out)
        fields.integer("endedTTL", activity.endedTTL, &out)
        fields.integer("staleTTL", activity.staleTTL, &out)
        out.append(UInt8(ascii: "}"))
    }
}
