import Foundation
import Testing

@testable import BridgeCore

/// The store writes a card's `ActivitySession` with `ActivitySessionJSON`, field by field, and reads
/// it back with `JSONDecoder`. A field the writer forgot would come back as its default after every
/// restart, so the session below sets every stored property (checked by reflection: adding one
/// without setting it here fails), with strings that need escaping and hostile Unicode.
@Suite("Activity session round trip")
struct ActivitySessionRoundTripTests {
    static func everyFieldSet() -> ActivitySession {
        var session = ActivitySession(
            identity: ActivityIdentity(
                slug: "gh-1234abcd-u9f8e7d6c", name: "GitHub: wid\"gets / CI 🚀\u{202E}",
                target: ActivityTarget(
                    members: ["alice", "bob\u{0}"], groups: ["ops", "sre"], tags: ["a\\b", "</script>"])))
        session.owner = RunKey(repository: "acme/wid\"gets", runID: 9_007_199_254, attempt: 2)
        session.phase = .finalShown
        session.acknowledged = StoredActivity(
            state: "ongoing",
            content: [
                "template": .string("steps"), "progress": .number(0.625), "current_step": .number(3),
                "steps_labels": .array([.string("build (linux, 6.0)"), .string("deploy\n\"prod\"")]),
                "state": .string("Running \u{200B}tests 🧪"), "nested": .object(["ok": .bool(true), "none": .null]),
            ], name: "GitHub: widgets", priority: 5, endedTTL: 900, staleTTL: 1_800)
        session.lastPatchAt = 1_700_000_300.125
        session.finalShownAt = 1_700_000_301.5
        session.retryAt = 1_700_000_400.75
        session.failures = 3
        session.rejectedBody = .object([
            "content": .object(["progress": .number(1.5), "x": .array([.null, .bool(false)])])
        ])
        session.needsFullFrame = true
        session.droppedFields = ["step_labels": "422 activity.content_invalid: \"quoted\"", "icon": "422 x"]
        session.lastProblem = "422: content.progress: must be ≤ 1 \"quoted\"\t"
        session.lastProblemAt = 1_700_000_299.875
        session.pendingSince = 1_700_000_298.25
        session.fidelity = .milestones
        session.recentUpdates = [1_700_000_100.5, 1_700_000_200, 1_700_000_300.125]
        session.totalUpdates = 42
        session.acknowledgedStep = 4
        session.endedAt = 1_700_000_200.25
        session.deletionRequestedAt = 1_700_000_300.5
        session.deletedAt = 1_700_000_301.75
        session.waitsForRoom = true
        session.serverIdentity = ActivityIdentity(slug: "gh-1", name: "GitHub: widgets")
        session.reused = true
        session.priority = 3
        return session
    }

    /// The stored properties `session` leaves at a default a forgotten field would decode to: nil,
    /// false, zero, or a collection with fewer than two entries.
    static func unsetProperties(of session: ActivitySession) -> [String] {
        Mirror(reflecting: session).children.compactMap { child -> String? in
            let name = child.label ?? "?"
            let value = child.value
            let optional = Mirror(reflecting: value)
            if optional.displayStyle == .optional, optional.children.isEmpty { return "\(name) is nil" }
            if let flag = value as? Bool, !flag { return "\(name) is false" }
            if let number = value as? Int, number == 0 { return "\(name) is zero" }
            if let list = value as? [UnixTime], list.count < 2 { return "\(name) has fewer than two entries" }
            return nil
        }
    }

    @Test("the session used below sets every stored property, and the check notices one left unset")
    func everyPropertySet() {
        #expect(Self.unsetProperties(of: Self.everyFieldSet()) == [])
        var session = Self.everyFieldSet()
        session.fidelity = nil
        session.needsFullFrame = false
        #expect(Self.unsetProperties(of: session) == ["needsFullFrame is false", "fidelity is nil"])
    }

    @Test("the store's writer keeps every property: JSONDecoder reads back an equal session")
    func storeWriterRoundTrip() throws {
        for session in [Self.everyFieldSet(), ActivitySession(identity: ActivityIdentity(slug: "gh-1", name: "n"))] {
            let text = try #require(ActivitySessionJSON.text(of: session))
            let decoded = try JSONDecoder().decode(ActivitySession.self, from: Data(text.utf8))
            #expect(decoded == session, "\(text)")
        }
    }

    @Test("the store's writer says what Foundation's encoder says about the same session")
    func storeWriterMatchesFoundation() throws {
        let session = Self.everyFieldSet()
        let text = try #require(ActivitySessionJSON.text(of: session))
        #expect(try JSONValue(parsing: Data(text.utf8)) == JSONValue(parsing: JSONEncoder().encode(session)))
    }

    @Test("a time JSON cannot hold makes the writer give up, for the generic encoder to report")
    func nonFiniteTime() {
        var session = Self.everyFieldSet()
        #expect(ActivitySessionJSON.text(of: session) != nil)
        session.recentUpdates = [1, .nan]
        #expect(ActivitySessionJSON.text(of: session) == nil)
        session.recentUpdates = nil
        session.retryAt = .infinity
        #expect(ActivitySessionJSON.text(of: session) == nil)
    }
}
