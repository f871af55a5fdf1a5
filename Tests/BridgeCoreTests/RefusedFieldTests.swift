import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

/// A refusal never freezes a card: when PushWard refuses a content body (422) naming a field, the
/// next frame goes without that field's value, the run records what was dropped, and the card
/// keeps moving to its end.
@Suite("refused fields")
struct RefusedFieldTests {
    static let body: JSONValue = [
        "state": "ongoing",
        "content": ["template": "steps", "progress": 0.5, "step_labels": ["a", "b"], "state": "Build", "icon": "x"],
    ]

    @Test("the field comes from errors[].location, else from the start of detail; never an essential one")
    func readsTheField() {
        var problem = PushWardProblem(status: 422, code: "activity.content_invalid", detail: "validation failed")
        problem.fieldLocations = ["body.content.step_labels[1]"]
        #expect(RefusedField.of(problem, body: Self.body) == "step_labels")
        let fake = PushWardProblem(
            status: 422, code: "activity.content_invalid", detail: "content.state: must be at most 256 runes")
        #expect(RefusedField.of(fake, body: Self.body) == "state")
        let plain = PushWardProblem(status: 422, code: "activity.content_invalid", detail: "icon is not a symbol")
        #expect(RefusedField.of(plain, body: Self.body) == "icon")
        let essential = PushWardProblem(
            status: 422, code: "activity.content_invalid", detail: "progress must be between 0.0 and 1.0, got 1.5")
        #expect(RefusedField.of(essential, body: Self.body) == nil, "a card cannot go without its progress")
        let absent = PushWardProblem(status: 422, detail: "subtitle: too long")
        #expect(RefusedField.of(absent, body: Self.body) == nil, "a field the body did not carry")
        let other = PushWardProblem(status: 400, code: "activity.state_invalid", detail: "state: must be ongoing")
        #expect(RefusedField.of(other, body: Self.body) == nil, "only a 422 names a content value")
    }

    static let script = RunScript(runID: 77, runNumber: 7)
    static let events = script.deliveries(waves: [
        [RunScript.Job("lint")], [RunScript.Job("test (a)"), RunScript.Job("test (b)")], [RunScript.Job("deploy")],
    ])

    static func play(refusing field: String, afterEvents: Int) -> AnsweringHarness {
        var harness = AnsweringHarness(start: Self.script.start)
        for (index, event) in Self.events.enumerated() {
            if index == afterEvents { harness.server.refuseOnce(field: field) }
            harness.feed(event, at: Self.script.start + Double(index) * 10)
        }
        // Past the end frame and the end, before the ended card would be tidied away.
        harness.run(until: harness.clock + 300)
        return harness
    }

    @Test(
        "refused once, on the first frame or mid-run: recorded, left out, and the card still reaches its end",
        arguments: ["step_labels", "subtitle", "state", "step_colors", "url_action", "secondary_url_action", "icon"])
    func theCardKeepsMoving(field: String) throws {
        // Fields that move while the run goes are refused mid-run too; the rest are sent once.
        let moving = ["step_labels", "state", "step_colors"].contains(field)
        for afterEvents in moving ? [0, 6] : [0] {
            let harness = Self.play(refusing: field, afterEvents: afterEvents)
            let refused = harness.sent.filter { $0.status == 422 }
            #expect(refused.count == 1, "\(field) after \(afterEvents): \(refused.map(\.status))")
            let unexpected = harness.server.violations.filter { $0.rule != "refused once by the test" }
            #expect(unexpected.isEmpty, "\(unexpected)")
            let stored = try #require(harness.server.activities.values.first)
            #expect(stored.state == "ended", "\(field) after \(afterEvents)")
            #expect(stored.content["progress"] == 1, "\(field) after \(afterEvents): the final frame was taken")
            #expect(stored.content["current_step"] == 3)
            #expect(stored.content[field] == nil, "\(field): cleared, never sent again")
            let session = try #require(harness.engine.sessions.values.first)
            #expect(session.droppedFields?[field]?.contains("422") == true)
            // Nothing after the refusal carried the field's value again.
            let index = try #require(harness.sent.firstIndex { $0.status == 422 })
            for later in harness.sent[(index + 1)...] {
                let value = later.planned.request.body["content"]?[field]
                #expect(value == nil || value == .null, "\(field) sent again")
            }
        }
    }

    @Test("an essential field refused stays a refusal: that body is never sent again")
    func essentialFieldIsNotDropped() throws {
        let harness = Self.play(refusing: "progress", afterEvents: 3)
        #expect(harness.sent.filter { $0.status == 422 }.count == 1)
        let session = try #require(harness.engine.sessions.values.first)
        #expect(session.droppedFields == nil)
        #expect(harness.server.activities.values.first?.state == "ended", "later frames differ and go through")
    }
}
