import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

@Suite struct ContractValidatorTests {
    private let now: UnixTime = 1_700_000_000

    // MARK: - The documented examples (spec/steps-template.txt), verbatim

    private static let ciExample = #"""
        {
          "state": "ongoing",
          "content": {
            "template": "steps",
            "progress": 0.375,
            "state": "Build Container Image",
            "icon": "arrow.triangle.branch",
            "subtitle": "pushward-server / CI/CD",
            "current_step": 2,
            "total_steps": 8,
            "step_rows": [1, 1, 3, 1, 1, 2, 1, 1],
            "step_labels": ["Lint", "Build", "Test", "Scan", "Publish", "Deploy", "Verify", "Notify"],
            "accent_color": "green"
          }
        }
        """#

    private static let segmentedExample = #"""
        {
          "state": "ongoing",
          "content": {
            "template": "steps",
            "state": "Drying",
            "icon": "dishwasher",
            "subtitle": "Eco cycle",
            "current_step": 3,
            "total_steps": 3,
            "progress": 0.5,
            "step_labels": ["Wash", "Rinse", "Dry"],
            "step_weights": [1, 2, 1],
            "step_colors": ["blue", "teal", "orange"],
            "accent_color": "teal"
          }
        }
        """#

    private static let weightedMatrixExample = #"""
        {
          "state": "ongoing",
          "content": {
            "template": "steps",
            "state": "Test",
            "icon": "arrow.triangle.branch",
            "subtitle": "my-app / CI/CD",
            "current_step": 3,
            "total_steps": 6,
            "progress": 0.5,
            "step_labels": ["Lint", "Build", "Test", "Scan", "Publish", "Deploy"],
            "step_rows": [1, 1, 3, 1, 1, 1],
            "step_weights": [15, 180, 90, 45, 20, 60],
            "step_colors": ["purple", "blue", "yellow", "orange", "green", "green"],
            "accent_color": "green"
          }
        }
        """#

    private static let liveProgressExample = #"""
        {
          "state": "ongoing",
          "content": {
            "template": "steps",
            "state": "Heating water",
            "icon": "dishwasher",
            "subtitle": "Eco 50",
            "current_step": 2,
            "total_steps": 4,
            "step_labels": ["Pre-wash", "Wash", "Rinse", "Dry"],
            "step_weights": [1, 6, 1, 2],
            "live_progress": true,
            "duration": "90m",
            "accent_color": "teal"
          }
        }
        """#

    private static let artworkExample = #"""
        {
          "state": "ongoing",
          "content": {
            "template": "steps",
            "state": "Importing",
            "subtitle": "Radarr",
            "current_step": 3,
            "total_steps": 4,
            "step_labels": ["Grab", "Download", "Import", "Rename"],
            "progress": 0.6,
            "image_url": "https://image.example.com/posters/arrival.jpg",
            "image_shape": "poster",
            "image_thumbhash": "GYpSpSh4eHt4eHh4eHh4eHh4iIeH",
            "accent_color": "purple"
          }
        }
        """#

    @Test(arguments: [ciExample, segmentedExample, weightedMatrixExample, artworkExample])
    func documentedExamplesPassOnAFreshActivity(example: String) throws {
        var server = InMemoryPushWard()
        #expect(server.handle(post("example"), at: now) == 201)
        let patch = PushWardRequest(method: .patch, slug: "example", body: try parse(example))
        let status = server.handle(patch, at: now)
        #expect(server.violations == [])
        #expect(status == 200)
        #expect(server.activities["example"]?.state == "ongoing")
        #expect(server.activities["example"]?.content["template"] == "steps")
    }

    /// The live-progress example omits `progress`, which the same document's field table marks
    /// required: as a first frame it is refused; as an update of an activity that already holds a
    /// `progress` (merge-patch carries it forward) it is valid, and `duration` becomes the window.
    @Test func liveProgressExampleIsAValidUpdateButNotAFirstFrame() throws {
        let patch = PushWardRequest(method: .patch, slug: "wash", body: try parse(Self.liveProgressExample))
        var fresh = InMemoryPushWard()
        fresh.handle(post("wash"), at: now)
        #expect(fresh.handle(patch, at: now) == 422)
        #expect(fresh.violations == [ContractViolation(field: "content.progress", rule: "required")])

        var server = InMemoryPushWard()
        server.handle(post("wash"), at: now)
        let segmented = PushWardRequest(method: .patch, slug: "wash", body: try parse(Self.segmentedExample))
        #expect(server.handle(segmented, at: now - 60) == 200)
        #expect(server.handle(patch, at: now) == 200)
        #expect(server.violations == [])
        let content = server.activities["wash"]?.content ?? [:]
        #expect(content["start_date"] == .number(now))
        #expect(content["end_date"] == .number(now + 5400))
        #expect(content["duration"] == nil)
        // total_steps went 3 → 4: the stored 3-entry step_colors no longer fits and is dropped;
        // step_labels and step_weights were re-sent with 4 entries.
        #expect(content["step_colors"] == nil)
        #expect(content["step_weights"] == [1, 6, 1, 2])
        #expect(content["progress"] == 0.5)
    }

    // MARK: - validateContent: one breach per rule

    @Test func fullValidContentPasses() {
        #expect(ContractValidator.validateContent(Self.validContent) == [])
        #expect(ContractValidator.validateContent(Self.validContent, at: now) == [])
    }

    @Test(arguments: Self.contentBreaches)
    func eachContentRuleHasAFailingCase(breach: Breach) {
        var content = Self.validContent
        content[breach.key] = breach.value
        let violations = ContractValidator.validateContent(content)
        #expect(
            violations.contains { $0.field == breach.field },
            "\(breach) gave \(violations)"
        )
    }

    @Test func endDateMoreThanFiveYearsAheadIsRefusedWhenTheClockIsKnown() {
        var content = Self.validContent
        content["start_date"] = .number(now)
        content["end_date"] = .number(now + 157_788_001)
        #expect(ContractValidator.validateContent(content) == [])
        #expect(ContractValidator.validateContent(content, at: now).map(\.field) == ["end_date"])
    }

    @Test func characterLimitsCountCharactersNotBytes() {
        var content = Self.validContent
        content["compact_label"] = "🚀🚀🚀🚀"
        content["step_labels"] = [.string(String(repeating: "é", count: 32)), "b", "c"]
        #expect(ContractValidator.validateContent(content) == [])
    }

    @Test func minimalContentPasses() {
        let content: [String: JSONValue] = ["template": "steps", "progress": 0, "current_step": 0, "total_steps": 1]
        #expect(ContractValidator.validateContent(content) == [])
    }

    // MARK: - POST

    @Test func validPostPasses() {
        #expect(ContractValidator.validate(post("ci"), stored: nil) == [])
        let full = PushWardRequest(
            method: .post, slug: "ci",
            body: [
                "slug": "ci", "name": "CI", "priority": 10, "ended_ttl": 1, "stale_ttl": 2_592_000,
                "dismissal_ttl": 60,
            ]
        )
        #expect(ContractValidator.validate(full, stored: nil) == [])
    }

    @Test(arguments: Self.postBreaches)
    func eachPostRuleHasAFailingCase(breach: Breach) {
        var body = post("ci").body.objectValue ?? [:]
        body[breach.key] = breach.value
        let request = PushWardRequest(method: .post, slug: "ci", body: .object(body))
        let violations = ContractValidator.validate(request, stored: nil)
        #expect(violations.contains { $0.field == breach.field }, "\(breach) gave \(violations)")
    }

    @Test func postBodyMustBeAnObject() {
        let request = PushWardRequest(method: .post, slug: "ci", body: ["ci"])
        #expect(ContractValidator.validate(request, stored: nil).map(\.field) == ["body"])
    }

    // MARK: - PATCH

    @Test func patchOfAnUnknownSlugIsNotFound() {
        let request = PushWardRequest(method: .patch, slug: "ghost", body: ["state": "ongoing"])
        #expect(
            ContractValidator.validate(request, stored: nil)
                == [ContractViolation(field: "slug", rule: "activity.not_found")]
        )
    }

    @Test(arguments: [
        JSONValue.object(["state": "ongoing"]),
        ["state": "ended"],
        ["priority": 0, "ended_ttl": nil, "stale_ttl": 30, "sound": "default"],
        ["content": ["progress": 0.75]],
        ["content": ["live_progress": nil, "end_date": nil, "start_date": nil]],
        ["content": ["live_progress": false]],
        ["content": ["current_step": 3, "duration": 240, "live_progress": true]],
        ["content": ["current_step": 3, "end_date": 1_700_000_100]],
        ["content": ["step_rows": nil, "step_labels": nil, "step_weights": nil, "step_colors": nil]],
        ["content": ["total_steps": 2, "current_step": 1, "step_rows": [1, 1]]],
        [:],
    ])
    func validPatchesPass(body: JSONValue) {
        let request = PushWardRequest(method: .patch, slug: "ci", body: body)
        #expect(ContractValidator.validate(request, stored: Self.storedOngoing, at: now) == [])
    }

    @Test func stateOnlyPatchOfAnEmptyActivityPasses() {
        let request = PushWardRequest(method: .patch, slug: "ci", body: ["state": "ongoing"])
        #expect(ContractValidator.validate(request, stored: StoredActivity(name: "CI", priority: 1)) == [])
    }

    @Test(arguments: Self.patchBreaches)
    func eachPatchRuleHasAFailingCase(breach: PatchBreach) {
        let request = PushWardRequest(method: .patch, slug: "ci", body: breach.body)
        let violations = ContractValidator.validate(request, stored: Self.storedOngoing, at: now)
        #expect(violations.contains { $0.field == breach.field }, "\(breach) gave \(violations)")
    }

    @Test func aMismatchedArrayIsReportedOnce() {
        let body: JSONValue = ["content": ["total_steps": 3, "step_rows": [1, 1, 1, 1]]]
        let violations = ContractValidator.validate(
            PushWardRequest(method: .patch, slug: "ci", body: body), stored: Self.storedOngoing, at: now)
        let expected = ContractViolation(field: "content.step_rows", rule: "length 4 must equal total_steps (3)")
        #expect(violations == [expected])
    }

    @Test func patchValidationWithoutAClockSkipsTheFiveYearBound() {
        // An end_date more than 5 years ahead only shows up when the clock is known.
        let body: JSONValue = ["content": ["end_date": 1_900_000_000]]
        let request = PushWardRequest(method: .patch, slug: "ci", body: body)
        #expect(ContractValidator.validate(request, stored: Self.storedOngoing) == [])
        let withClock = ContractValidator.validate(request, stored: Self.storedOngoing, at: now)
        #expect(withClock.map(\.field) == ["content.end_date"])
    }

    /// The failover's full frame: the nulled window wins over `duration`, so the stored result has
    /// `live_progress` and no window, which PushWard refuses with 422; the body is also ambiguous.
    @Test func aFullFrameNullingTheWindowBesideDurationIsRefused() {
        let body: JSONValue = [
            "state": "ongoing",
            "content": ["live_progress": true, "duration": 104, "end_date": nil, "start_date": nil],
        ]
        var server = InMemoryPushWard()
        server.handle(post("ci"), at: now)
        let first: JSONValue = ["state": "ongoing", "content": .object(Self.validContent)]
        #expect(server.handle(PushWardRequest(method: .patch, slug: "ci", body: first), at: now) == 200)
        #expect(server.handle(PushWardRequest(method: .patch, slug: "ci", body: body), at: now) == 422)
        #expect(
            server.violations.contains(
                ContractViolation(field: "content.live_progress", rule: "live_progress requires end_date or duration")),
            "\(server.violations)")
        #expect(server.activities["ci"]?.content["end_date"] == Self.validContent["end_date"], "nothing applied")
    }

    @Test(arguments: [
        JSONValue.object(["duration": 60, "end_date": 1_700_000_100]), ["duration": 60, "end_date": nil],
        ["duration": 60, "start_date": 1_699_999_990], ["duration": "1m", "start_date": nil],
    ])
    func durationBesideAWindowDateIsFlagged(content: JSONValue) {
        let request = PushWardRequest(method: .patch, slug: "ci", body: ["content": content])
        let violations = ContractValidator.validate(request, stored: Self.storedOngoing, at: now)
        let ambiguous = ContractViolation(
            field: "content.duration", rule: "must not be sent with start_date or end_date (a value or null)")
        #expect(violations.contains(ambiguous), "\(violations)")
    }

    // MARK: - InMemoryPushWard

    @Test func fakeServerAnswersLikePushWard() {
        var server = InMemoryPushWard()
        let patch = PushWardRequest(
            method: .patch, slug: "ci", body: ["state": "ongoing", "content": .object(Self.validContent)])

        #expect(server.handle(patch, at: now) == 404)
        #expect(server.activities.isEmpty)

        #expect(server.handle(post("ci"), at: now) == 201)
        #expect(server.activities["ci"] == StoredActivity(state: "ended", name: "CI", priority: 5))

        #expect(server.handle(patch, at: now + 1) == 200)
        #expect(server.activities["ci"]?.state == "ongoing")
        #expect(server.activities["ci"]?.content == Self.validContent)

        let bad = PushWardRequest(method: .patch, slug: "ci", body: ["content": ["progress": 2]])
        #expect(server.handle(bad, at: now + 2) == 422)
        #expect(server.activities["ci"]?.content["progress"] == 0.5)

        let badPost = PushWardRequest(method: .post, slug: "ci", body: ["slug": "ci", "name": "CI", "priority": 99])
        #expect(server.handle(badPost, at: now + 3) == 422)
        #expect(server.activities["ci"]?.priority == 5)

        let rePost = PushWardRequest(
            method: .post, slug: "ci", body: ["slug": "ci", "name": "CI again", "priority": 2])
        #expect(server.handle(rePost, at: now + 4) == 201)
        #expect(server.activities["ci"]?.name == "CI again")
        #expect(server.activities["ci"]?.state == "ongoing")
        #expect(server.activities["ci"]?.content == Self.validContent)

        #expect(server.log.map(\.status) == [404, 201, 200, 422, 422, 201])
        #expect(server.log.map(\.at) == [now, now, now + 1, now + 2, now + 3, now + 4])
        #expect(server.log[0].violations == [ContractViolation(field: "slug", rule: "activity.not_found")])
        #expect(server.log[3].violations.map(\.field) == ["content.progress"])
        #expect(server.log[4].violations.map(\.field) == ["priority"])
        #expect(server.violations.map(\.field) == ["slug", "content.progress", "priority"])
    }

    @Test func fakeServerEndsAndAppliesTheTotalStepsRule() {
        var server = InMemoryPushWard()
        server.handle(post("ci"), at: now)
        let start: JSONValue = ["state": "ongoing", "content": .object(Self.validContent)]
        #expect(server.handle(PushWardRequest(method: .patch, slug: "ci", body: start), at: now) == 200)
        let shrink: JSONValue = ["content": ["total_steps": 2, "current_step": 1, "step_labels": ["x", "y"]]]
        #expect(server.handle(PushWardRequest(method: .patch, slug: "ci", body: shrink), at: now + 1) == 200)
        let shrunk = server.activities["ci"]?.content ?? [:]
        #expect(shrunk["step_labels"] == ["x", "y"])
        #expect(shrunk["step_rows"] == nil && shrunk["step_weights"] == nil && shrunk["step_colors"] == nil)

        let end: JSONValue = ["state": "ended", "content": ["progress": 1, "current_step": 2]]
        #expect(server.handle(PushWardRequest(method: .patch, slug: "ci", body: end), at: now + 2) == 200)
        let ended = server.activities["ci"]
        #expect(ended?.state == "ended")
        #expect(ended?.content["live_progress"] == nil)
        #expect(ended?.content["start_date"] == nil)
        #expect(ended?.content["end_date"] == nil)
        #expect(server.violations == [])
    }

    // MARK: - Fixtures

    private func post(_ slug: String) -> PushWardRequest {
        PushWardRequest(method: .post, slug: slug, body: ["slug": .string(slug), "name": "CI", "priority": 5])
    }

    private func parse(_ text: String) throws -> JSONValue {
        try JSONValue(parsing: Data(text.utf8))
    }

    /// Content that uses every field the template knows, each validly.
    static let validContent: [String: JSONValue] = [
        "template": "steps", "progress": 0.5, "current_step": 2, "total_steps": 3,
        "step_rows": [1, 2, 10], "step_labels": ["Lint", "Test", "Deploy"], "step_weights": [1, 2.5, 1],
        "step_colors": ["", "red", "#00FF00aa"],
        "state": "Test (ubuntu, 1.23)", "subtitle": "owner/repo · main", "icon": "mdi:source-branch",
        "accent_color": "green", "background_color": "#112233", "text_color": "#aabbccdd",
        "url": "https://github.com/o/r/actions/runs/1", "secondary_url": "http://example.com/commit/abc",
        "url_action": ["url": "https://github.com/o/r/actions/runs/1", "title": "Run", "icon": "play"],
        "secondary_url_action": ["url": "https://example.com", "foreground": true, "method": "GET"],
        "tap_action": ["url": "https://example.com/tap"],
        "compact_label": "2/3", "live_progress": true, "start_date": 1_699_999_900, "end_date": 1_700_000_200,
        "image_url": "https://img.example.com/a.png", "image_shape": "circle",
        "image_thumbhash": "GYpSpSh4eHt4eHh4eHh4eHh4iIeH",
    ]

    private static let storedOngoing = StoredActivity(
        state: "ongoing", content: validContent, name: "CI", priority: 5)

    private static let long2049 = "https://example.com/" + String(repeating: "a", count: 2029)

    static let contentBreaches: [Breach] = [
        Breach("colour", "colour", "red"),
        Breach("template", "template", "countdown"), Breach("template", "template", nil),
        Breach("progress", "progress", nil), Breach("progress", "progress", 1.5), Breach("progress", "progress", -0.1),
        Breach("progress", "progress", "0.5"), Breach("progress", "progress", .number(.infinity)),
        Breach("progress", "progress", .number(.nan)), Breach("progress", "progress", true),
        Breach("total_steps", "total_steps", nil), Breach("total_steps", "total_steps", 0),
        Breach("total_steps", "total_steps", 65), Breach("total_steps", "total_steps", 2.5),
        Breach("total_steps", "total_steps", "3"),
        Breach("current_step", "current_step", nil), Breach("current_step", "current_step", -1),
        Breach("current_step", "current_step", 4), Breach("current_step", "current_step", 1.5),
        Breach("step_rows", "step_rows", [1, 2]), Breach("step_rows[1]", "step_rows", [1, 0, 1]),
        Breach("step_rows[2]", "step_rows", [1, 1, 11]), Breach("step_rows[0]", "step_rows", ["1", 1, 1]),
        Breach("step_rows", "step_rows", "1,2,1"),
        Breach("step_labels", "step_labels", ["a", "b", "c", "d"]),
        Breach("step_labels[1]", "step_labels", ["a", .string(String(repeating: "x", count: 33)), "c"]),
        Breach("step_labels[2]", "step_labels", ["a", "b", 3]),
        Breach("step_weights", "step_weights", [1]), Breach("step_weights[1]", "step_weights", [1, 0, 1]),
        Breach("step_weights[0]", "step_weights", [-1, 1, 1]), Breach("step_weights[2]", "step_weights", [1, 1, "2"]),
        Breach("step_colors", "step_colors", ["", ""]), Breach("step_colors[0]", "step_colors", ["rouge", "", ""]),
        Breach("step_colors[1]", "step_colors", ["", "#12345", ""]),
        Breach("step_colors[2]", "step_colors", ["", "", 3]), Breach("step_colors[0]", "step_colors", ["Red", "", ""]),
        Breach("state", "state", .string(String(repeating: "s", count: 257))), Breach("state", "state", 5),
        Breach("subtitle", "subtitle", .string(String(repeating: "s", count: 257))),
        Breach("icon", "icon", .string(String(repeating: "i", count: 129))),
        Breach("accent_color", "accent_color", "rouge"), Breach("accent_color", "accent_color", ""),
        Breach("accent_color", "accent_color", "#1234"), Breach("accent_color", "accent_color", "#GGHHII"),
        Breach("background_color", "background_color", "#1122334"), Breach("text_color", "text_color", 0xFFFFFF),
        Breach("url", "url", "ftp://example.com"), Breach("url", "url", "https://example.com/a b"),
        Breach("url", "url", "https://example.com/\u{7}"), Breach("url", "url", .string(long2049)),
        Breach("url", "url", ""), Breach("url", "url", "https://"), Breach("url", "url", "github.com/o/r"),
        Breach("url", "url", 5),
        Breach("secondary_url", "secondary_url", "javascript:alert(1)"),
        Breach("url_action", "url_action", "https://example.com"),
        Breach("url_action.url", "url_action", ["title": "Run"]),
        Breach("url_action.url", "url_action", ["url": "mailto:a@b.c"]),
        Breach(
            "url_action.title", "url_action",
            [
                "url": "https://x.y",
                "title": .string(String(repeating: "t", count: 65)),
            ]),
        Breach(
            "url_action.icon", "url_action",
            [
                "url": "https://x.y",
                "icon": .string(String(repeating: "i", count: 65)),
            ]),
        Breach("url_action.foreground", "url_action", ["url": "https://x.y", "foreground": "yes"]),
        Breach("url_action.target", "url_action", ["url": "https://x.y", "target": "_blank"]),
        Breach("secondary_url_action.method", "secondary_url_action", ["url": "https://x.y", "method": "SEND"]),
        Breach("secondary_url_action.url", "secondary_url_action", ["url": "https://exa mple.com"]),
        Breach("tap_action", "tap_action", [1]),
        Breach("compact_label", "compact_label", "12345"), Breach("compact_label", "compact_label", 12),
        Breach("live_progress", "live_progress", "yes"),
        Breach("end_date", "start_date", 1_700_000_200), Breach("start_date", "start_date", 1.5),
        Breach("end_date", "end_date", "1700000200"),
        Breach("duration", "duration", "soon"), Breach("duration", "duration", 0),
        Breach("image_url", "image_url", "http://img.example.com/a.png"),
        Breach("image_url", "image_url", "https://user:pw@img.example.com/a.png"),
        Breach("image_url", "image_url", .string(long2049)),
        Breach("image_shape", "image_shape", "oval"),
        Breach("image_thumbhash", "image_thumbhash", .string(String(repeating: "h", count: 65))),
        Breach("image_thumbhash", "image_thumbhash", 7),
    ]

    static let postBreaches: [Breach] = [
        Breach("slug", "slug", nil), Breach("slug", "slug", ""), Breach("slug", "slug", "other"),
        Breach("slug", "slug", 1),
        Breach("name", "name", nil), Breach("name", "name", .string(String(repeating: "n", count: 257))),
        Breach("name", "name", 3),
        Breach("priority", "priority", nil), Breach("priority", "priority", 11), Breach("priority", "priority", -1),
        Breach("priority", "priority", 1.5), Breach("priority", "priority", "5"),
        Breach("ended_ttl", "ended_ttl", 0), Breach("stale_ttl", "stale_ttl", 2_592_001),
        Breach("dismissal_ttl", "dismissal_ttl", "60"), Breach("ended_ttl", "ended_ttl", .null),
        Breach("content", "content", ["template": "steps"]),
    ]

    static let patchBreaches: [PatchBreach] = [
        PatchBreach("name", ["name": "CI"]),
        PatchBreach("state", ["state": "running"]), PatchBreach("state", ["state": nil]),
        PatchBreach("priority", ["priority": 11]), PatchBreach("priority", ["priority": nil]),
        PatchBreach("ended_ttl", ["ended_ttl": 0]), PatchBreach("stale_ttl", ["stale_ttl": "60"]),
        PatchBreach("sound", ["sound": 5]),
        PatchBreach("content", ["content": "steps"]),
        PatchBreach("content.colour", ["content": ["colour": nil]]),
        PatchBreach("content.duration", ["content": ["duration": "1.5h"]]),
        PatchBreach("content.step_rows", ["content": ["total_steps": 4, "step_rows": [1, 1, 1]]]),
        PatchBreach("content.step_labels", ["content": ["step_labels": ["a", "b"]]]),
        PatchBreach("content.progress", ["content": ["progress": nil]]),
        PatchBreach("content.template", ["content": ["template": nil]]),
        PatchBreach("content.live_progress", ["content": ["end_date": nil, "start_date": nil]]),
        PatchBreach("content.end_date", ["content": ["duration": 60, "end_date": 1_699_000_000]]),
        PatchBreach("content.end_date", ["content": ["end_date": 1_900_000_000]]),
        PatchBreach("content.current_step", ["content": ["total_steps": 1]]),
    ]
}

extension ContractValidatorTests {
    /// One content (or POST body) member set to a breaking value (nil removes it), and the field the
    /// violation must name.
    struct Breach: Sendable, CustomTestStringConvertible {
        var field: String
        var key: String
        var value: JSONValue?

        init(_ field: String, _ key: String, _ value: JSONValue?) {
            self.field = field
            self.key = key
            self.value = value
        }

        var testDescription: String { "\(key) = \(value?.canonicalString ?? "<absent>") → \(field)" }
    }

    /// A PATCH body that breaks a rule, and the field the violation must name.
    struct PatchBreach: Sendable, CustomTestStringConvertible {
        var field: String
        var body: JSONValue

        init(_ field: String, _ body: JSONValue) {
            self.field = field
            self.body = body
        }

        var testDescription: String { "\(body.canonicalString) → \(field)" }
    }
}
