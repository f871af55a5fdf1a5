import BridgeCore
import Testing

@Suite struct PushWardActivityModelTests {
    private let now: UnixTime = 1_700_000_000.75
    private let nowSeconds = 1_700_000_000

    private var ongoing: StoredActivity {
        StoredActivity(
            state: "ongoing",
            content: [
                "template": "steps", "progress": 0.5, "current_step": 2, "total_steps": 4,
                "step_rows": [1, 2, 1, 1], "step_labels": ["a", "b", "c", "d"], "step_weights": [1, 1, 2, 1],
                "step_colors": ["", "red", "", ""], "state": "Build", "live_progress": true,
                "start_date": 1_699_999_000, "end_date": 1_700_000_500,
            ],
            name: "CI", priority: 3, endedTTL: 600, staleTTL: 3600
        )
    }

    // MARK: - create

    @Test func newActivityStartsEndedAndEmpty() {
        let body: JSONValue = ["slug": "ci", "name": "CI", "priority": 5, "ended_ttl": 900]
        let created = PushWardActivityModel.create(body, existing: nil)
        #expect(created == StoredActivity(state: "ended", content: [:], name: "CI", priority: 5, endedTTL: 900))
    }

    @Test func rePostRefreshesSettingsAndKeepsStateAndContent() {
        let body: JSONValue = ["slug": "ci", "name": "CI 2", "priority": 7, "stale_ttl": 120]
        let refreshed = PushWardActivityModel.create(body, existing: ongoing)
        #expect(refreshed.state == "ongoing")
        #expect(refreshed.content == ongoing.content)
        #expect(refreshed.name == "CI 2")
        #expect(refreshed.priority == 7)
        #expect(refreshed.staleTTL == 120)
        // A POST is a full description: the TTL it leaves out returns to the server default.
        #expect(refreshed.endedTTL == nil)
    }

    // MARK: - applyPatch: top level

    @Test func topLevelMembersReplaceAndNullTTLsReset() {
        let body: JSONValue = ["state": "ongoing", "priority": 9, "ended_ttl": nil, "stale_ttl": 60]
        let patched = PushWardActivityModel.applyPatch(body, to: ongoing, at: now)
        #expect(patched.priority == 9)
        #expect(patched.endedTTL == nil)
        #expect(patched.staleTTL == 60)
        #expect(patched.content == ongoing.content)
        #expect(patched.name == "CI")
    }

    @Test func emptyPatchChangesNothing() {
        #expect(PushWardActivityModel.applyPatch([:], to: ongoing, at: now) == ongoing)
    }

    // MARK: - applyPatch: content

    @Test func contentIsMergePatchedAndNullClears() {
        let body: JSONValue = ["content": ["progress": 0.75, "state": nil, "icon": "hammer"]]
        let patched = PushWardActivityModel.applyPatch(body, to: ongoing, at: now)
        var expected = ongoing.content
        expected["progress"] = 0.75
        expected["state"] = nil
        expected["icon"] = "hammer"
        #expect(patched.content == expected)
        #expect(patched.state == "ongoing")
    }

    @Test func nullContentClearsAllOfIt() {
        let patched = PushWardActivityModel.applyPatch(["content": nil], to: ongoing, at: now)
        #expect(patched.content.isEmpty)
    }

    @Test func nonObjectContentIsNotStored() {
        let patched = PushWardActivityModel.applyPatch(["content": "oops"], to: ongoing, at: now)
        #expect(patched.content == ongoing.content)
    }

    // MARK: - applyPatch: duration

    @Test(arguments: [(JSONValue.number(90), 90), ("90m", 5400), ("1h30m", 5400), ("2h", 7200), ("45s", 45)])
    func durationSetsTheWindowFromNow(duration: JSONValue, seconds: Int) {
        let patched = PushWardActivityModel.applyPatch(["content": ["duration": duration]], to: ongoing, at: now)
        #expect(patched.content["start_date"] == .number(Double(nowSeconds)))
        #expect(patched.content["end_date"] == .number(Double(nowSeconds + seconds)))
        #expect(patched.content["duration"] == nil)
    }

    @Test func endDateInThePatchWinsOverDuration() {
        // "If both duration and end_date are provided, end_date wins - duration is ignored": the
        // duration does not move start_date either.
        let body: JSONValue = ["content": ["duration": "90m", "end_date": 1_700_000_100]]
        let patched = PushWardActivityModel.applyPatch(body, to: ongoing, at: now)
        #expect(patched.content["end_date"] == 1_700_000_100)
        #expect(patched.content["start_date"] == ongoing.content["start_date"])
        #expect(patched.content["duration"] == nil)
    }

    @Test func aNullEndDateWinsOverDurationAndClearsTheWindow() {
        // The body `Reconciler.fullFrame` once sent after a failover: PushWard applies the nulls
        // and ignores the duration, leaving `live_progress` with no window.
        let body: JSONValue = [
            "content": ["live_progress": true, "duration": 104, "end_date": nil, "start_date": nil]
        ]
        let patched = PushWardActivityModel.applyPatch(body, to: ongoing, at: now)
        #expect(patched.content["end_date"] == nil)
        #expect(patched.content["start_date"] == nil)
        #expect(patched.content["live_progress"] == true)
        #expect(patched.content["duration"] == nil)
    }

    @Test func aNullStartDateIsThePatchsWhileDurationSetsTheEnd() {
        let body: JSONValue = ["content": ["duration": 60, "start_date": nil]]
        let patched = PushWardActivityModel.applyPatch(body, to: ongoing, at: now)
        #expect(patched.content["start_date"] == nil)
        #expect(patched.content["end_date"] == .number(Double(nowSeconds + 60)))
    }

    @Test func startDateInThePatchIsKeptWithDuration() {
        let body: JSONValue = ["content": ["duration": 60, "start_date": 1_699_999_990]]
        let patched = PushWardActivityModel.applyPatch(body, to: ongoing, at: now)
        #expect(patched.content["start_date"] == 1_699_999_990)
        #expect(patched.content["end_date"] == .number(Double(nowSeconds + 60)))
    }

    @Test func invalidDurationIsDroppedWithoutEffect() {
        let patched = PushWardActivityModel.applyPatch(["content": ["duration": "soon"]], to: ongoing, at: now)
        #expect(patched.content == ongoing.content)
    }

    @Test func windowCarriesForwardWithoutDuration() {
        let patched = PushWardActivityModel.applyPatch(["content": ["progress": 0.9]], to: ongoing, at: now)
        #expect(patched.content["start_date"] == 1_699_999_000)
        #expect(patched.content["end_date"] == 1_700_000_500)
        #expect(patched.content["live_progress"] == true)
    }

    // MARK: - applyPatch: total_steps

    @Test func changingTotalStepsDropsUnsentMismatchedArrays() {
        let body: JSONValue = ["content": ["total_steps": 3, "current_step": 1, "step_labels": ["x", "y", "z"]]]
        let patched = PushWardActivityModel.applyPatch(body, to: ongoing, at: now)
        #expect(patched.content["total_steps"] == 3)
        #expect(patched.content["step_labels"] == ["x", "y", "z"])
        for key in ["step_rows", "step_weights", "step_colors"] {
            #expect(patched.content[key] == nil, "\(key) should be dropped")
        }
    }

    @Test func changingTotalStepsKeepsArraysThatStillMatch() {
        var stored = ongoing
        stored.content["step_rows"] = [1, 1, 1]
        let patched = PushWardActivityModel.applyPatch(["content": ["total_steps": 3]], to: stored, at: now)
        #expect(patched.content["step_rows"] == [1, 1, 1])
        #expect(patched.content["step_labels"] == nil)
    }

    @Test func resendingTheSameTotalDropsNothing() {
        var stored = ongoing
        // Cannot happen after a valid history, which is why only a change of total drops arrays.
        stored.content["step_rows"] = [1, 1]
        let patched = PushWardActivityModel.applyPatch(["content": ["total_steps": 4]], to: stored, at: now)
        #expect(patched.content["step_rows"] == [1, 1])
    }

    // MARK: - applyPatch: ended

    @Test func endingClearsTheLiveWindow() {
        let patched = PushWardActivityModel.applyPatch(
            ["state": "ended", "content": ["progress": 1, "current_step": 4]], to: ongoing, at: now)
        #expect(patched.state == "ended")
        #expect(patched.content["live_progress"] == nil)
        #expect(patched.content["start_date"] == nil)
        #expect(patched.content["end_date"] == nil)
        #expect(patched.content["progress"] == 1)
        #expect(patched.content["step_rows"] == [1, 2, 1, 1])
    }

    @Test func aWindowSentToAnEndedActivityIsNotStored() {
        var stored = ongoing
        stored.state = "ended"
        let body: JSONValue = ["content": ["live_progress": true, "duration": 60]]
        let patched = PushWardActivityModel.applyPatch(body, to: stored, at: now)
        #expect(patched.content["live_progress"] == nil)
        #expect(patched.content["end_date"] == nil)
        #expect(patched.content["start_date"] == nil)
    }

    // MARK: - parseDuration

    @Test(arguments: [
        (JSONValue.number(1), 1), (5400, 5400), (157_788_000, 157_788_000), ("90s", 90), ("90m", 5400),
        ("1h30m", 5400), ("2h", 7200), ("1h0m5s", 3605), ("1m30s", 90), ("43830h", 157_788_000),
    ])
    func validDurations(value: JSONValue, seconds: Int) {
        #expect(PushWardActivityModel.parseDuration(value) == seconds)
    }

    @Test(arguments: [
        JSONValue.number(0), -5, 157_788_001, 1.5, .number(.infinity), "", "90", "m", "1m1h", "1h1h", "1.5h",
        "90x", " 90m", "90m ", "-5m", "0s", "0h0m", "43831h", "99999999999999h", true, nil, [90], ["s": 90],
    ])
    func invalidDurations(value: JSONValue) {
        #expect(PushWardActivityModel.parseDuration(value) == nil)
    }
}
