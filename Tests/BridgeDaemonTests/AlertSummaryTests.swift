import BridgeCore
import BridgeDaemon
import BridgeStore
import Testing

/// The words `explain`, `runs show` and the status page use for an alert.
@Suite("alert summary")
struct AlertSummaryTests {
    static func record(_ state: AlertRecord.State, attempts: Int, detail: String? = nil) -> AlertRecord {
        AlertRecord(
            id: 1, run: RunKey(repository: "acme/widgets", runID: 1, attempt: 1), reason: .failure,
            body: #"{"body":"b","title":"acme/widgets · CI failed"}"#, activitySlug: nil, createdAt: 1_796_083_200,
            state: state, attempts: attempts, nextAttemptAt: 1_796_083_260, lastAttemptAt: nil, status: nil,
            detail: detail, notificationID: nil, delivery: state == .sent ? "partial: no_apns_token" : nil,
            sentAt: state == .sent ? 1_796_083_201 : nil)
    }

    @Test("a routed alert names whom it reached")
    func routedAudience() {
        var routed = Self.record(.sent, attempts: 1)
        routed.body = #"{"body":"b","target":{"members":["usr_1"]},"title":"acme/widgets · CI failed"}"#
        #expect(AlertSummary.audience(routed) == "members usr_1")
        #expect(AlertSummary.sentence(routed).contains("went to members usr_1 at"))
        #expect(AlertSummary.audience(Self.record(.sent, attempts: 1)) == "everyone the key reaches")
    }

    @Test("sent, waiting to be sent, retried, refused: each says what became of it")
    func sentences() {
        #expect(
            AlertSummary.sentence(Self.record(.sent, attempts: 2))
                == "The failure alert “acme/widgets · CI failed” went to everyone the key reaches at "
                + "2026-12-01T00:00:01Z (PushWard: partial: no_apns_token) after 2 attempts.")
        #expect(
            AlertSummary.sentence(Self.record(.pending, attempts: 0))
                == "The failure alert “acme/widgets · CI failed” is recorded and about to be sent.")
        #expect(
            AlertSummary.sentence(Self.record(.pending, attempts: 3, detail: "connection refused"))
                == "The failure alert “acme/widgets · CI failed” is not sent yet (attempt 3: connection refused); "
                + "next try at 2026-12-01T00:01:00Z.")
        #expect(
            AlertSummary.sentence(Self.record(.failed, attempts: 1, detail: "400 notification.invalid"))
                == "The failure alert “acme/widgets · CI failed” was not sent: 400 notification.invalid.")
    }
}

/// `explain` names whom a routed card reaches.
@Suite("explain routing")
struct ExplainRoutingTests {
    @Test("the owner's sentence says the card's target")
    func target() {
        let key = RunKey(repository: "acme/widgets", runID: 1, attempt: 1)
        var session = ActivitySession(
            identity: ActivityIdentity(
                slug: "gh-1-u2", name: "GitHub: widgets", target: ActivityTarget(members: ["usr_1"])))
        session.assign(to: key)
        let facts = RunExplanation.Facts(
            run: StoredRun(
                state: RunState(key: key, repository: Repository(fullName: "acme/widgets", htmlURL: nil), at: 0),
                slug: "gh-1-u2", released: false, updatedAt: 0),
            session: StoredSession(session: session, floor: nil, desired: nil, updatedAt: 0), acknowledged: nil,
            requests: [], deliveries: [], settings: ActivitySettings())
        #expect(RunExplanation.sentences(facts).contains { $0.hasSuffix("It reaches members usr_1 (routing).") })
    }
}
