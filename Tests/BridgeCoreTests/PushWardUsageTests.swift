import BridgeCore
import Foundation
import Testing

@Suite struct PushWardUsageTests {
    /// The `GET /auth/me` example from PushWard's documentation (spec/PUSHWARD-MORE.md §1), verbatim.
    static let documentedExample = #"""
        {"id":"…","nickname":"Alice","activity_count":3,"subscribed":false,"quota_period_month":202608,
         "notifications_used":128,"notifications_limit":500,"live_activity_updates_used":86,
         "live_activity_updates_limit":250,"widget_updates_used":12,"widget_updates_limit":50,
         "emails_used":3,"emails_limit":50,"quota_resets_at":"2026-09-01T00:00:00Z",
         "integration_key":{"id":"…","name":"ci","is_default":false,
           "permissions":{"activities":"manage","notifications":"send","widgets":"write","emails":"none"}}}
        """#

    static func decode(_ text: String) -> Result<PushWardUsage, PushWardUsageError> {
        PushWardUsage.decode(Data(text.utf8))
    }

    @Test func readsTheDocumentedExample() throws {
        let usage = try Self.decode(Self.documentedExample).get()
        #expect(
            usage
                == PushWardUsage(
                    liveActivityUpdatesUsed: 86, liveActivityUpdatesLimit: 250, widgetUpdatesUsed: 12,
                    widgetUpdatesLimit: 50, notificationsUsed: 128, notificationsLimit: 500,
                    quotaResetsAt: 1_788_220_800, quotaPeriodMonth: 202_608, subscribed: false, activityCount: 3))
        #expect(usage.liveActivityUpdatesRemaining == 164)
    }

    @Test func omittedLimitsMeanUnlimited() throws {
        // A paid account: PushWard leaves out the limits it does not apply.
        let usage = try Self.decode(
            #"""
            {"id":"u1","subscribed":true,"quota_period_month":202612,"live_activity_updates_used":1234,
             "widget_updates_used":77,"notifications_used":9,"notifications_limit":5000,
             "emails_used":0,"emails_limit":200,"quota_resets_at":"2026-12-02T00:00:00Z",
             "quota_resets_day_at":"2026-12-02T00:00:00Z"}
            """#
        ).get()
        #expect(usage.liveActivityUpdatesUsed == 1234)
        #expect(usage.liveActivityUpdatesLimit == nil)
        #expect(usage.liveActivityUpdatesRemaining == nil)
        #expect(usage.widgetUpdatesLimit == nil)
        #expect(usage.notificationsLimit == 5000)
        #expect(usage.subscribed == true)
        #expect(usage.quotaResetsAt == GitHubTimestamp.parse("2026-12-02T00:00:00Z"))
    }

    @Test func keepsOnlyWhatTheBudgetNeeds() throws {
        // Only the required member; `null` is read like an absent member.
        let usage = try Self.decode(#"{"live_activity_updates_used": 0, "live_activity_updates_limit": null}"#).get()
        #expect(usage == PushWardUsage(liveActivityUpdatesUsed: 0, liveActivityUpdatesLimit: nil))
        #expect(usage == .unlimited)
    }

    @Test func remainingIsNeverNegative() {
        let overdrawn = PushWardUsage(liveActivityUpdatesUsed: 252, liveActivityUpdatesLimit: 250)
        #expect(overdrawn.liveActivityUpdatesRemaining == 0)
        let none = PushWardUsage(liveActivityUpdatesUsed: 0, liveActivityUpdatesLimit: 0)
        #expect(none.liveActivityUpdatesRemaining == 0)
    }

    @Test(
        "bad input fails naming the member",
        arguments: [
            ("<html>502 Bad Gateway</html>", PushWardUsageError.invalidJSON("<html>502 Bad Gateway</html>")),
            ("[1, 2]", .notAnObject),
            (#"{"id": "u1"}"#, .missingField("live_activity_updates_used")),
            (#"{"live_activity_updates_used": null}"#, .missingField("live_activity_updates_used")),
            (
                #"{"live_activity_updates_used": "86"}"#,
                .invalidField("live_activity_updates_used", expected: "a whole number from 0 up")
            ),
            (
                #"{"live_activity_updates_used": 1.5}"#,
                .invalidField("live_activity_updates_used", expected: "a whole number from 0 up")
            ),
            (
                #"{"live_activity_updates_used": 1, "live_activity_updates_limit": -1}"#,
                .invalidField("live_activity_updates_limit", expected: "a whole number from 0 up")
            ),
            (
                #"{"live_activity_updates_used": 1, "widget_updates_used": true}"#,
                .invalidField("widget_updates_used", expected: "a whole number from 0 up")
            ),
            (
                #"{"live_activity_updates_used": 1, "quota_resets_at": 1788220800}"#,
                .invalidField("quota_resets_at", expected: "an RFC 3339 timestamp")
            ),
            (
                #"{"live_activity_updates_used": 1, "quota_resets_at": "2026-09-01"}"#,
                .invalidField("quota_resets_at", expected: "an RFC 3339 timestamp")
            ),
            (
                #"{"live_activity_updates_used": 1, "quota_period_month": 202613}"#,
                .invalidField("quota_period_month", expected: "a month as YYYYMM")
            ),
            (
                #"{"live_activity_updates_used": 1, "subscribed": "yes"}"#,
                .invalidField("subscribed", expected: "true or false")
            ),
        ])
    func refusesBadInput(body: String, expected: PushWardUsageError) {
        #expect(Self.decode(body) == .failure(expected))
    }

    @Test func errorsSayWhatIsWrong() {
        let error = PushWardUsageError.invalidField("quota_resets_at", expected: "an RFC 3339 timestamp")
        #expect(error.description == "PushWard's usage answer has 'quota_resets_at' that is not an RFC 3339 timestamp")
    }
}
