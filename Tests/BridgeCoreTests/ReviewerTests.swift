import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

/// Approve and Reject only for the approvers the operator names (`actions.rules[].approvers`):
/// each on a notification of their own (with routing, to their PushWard member), never to the
/// run's own actor, and a rule without approvers offers no review at all.
@Suite("reviewers")
struct ReviewerTests {
    static let publicURL = "https://hooks.example.com"

    static func engine(approvers: [String], routing: RoutingSettings = RoutingSettings()) -> BridgeEngine {
        AlertTests.engine(
            [],
            actions: ActionSettings(
                publicURL: publicURL, requireAuthentication: false,
                rules: [ActionRule(offer: [.approve, .cancel], approvers: approvers)]),
            routing: routing)
    }

    /// A run by `actor` whose deploy job waits on `production`.
    static func waiting(actor: String = "octocat", runID: Int = 5) -> [WebhookEvent] {
        var script = RunScript(runID: runID)
        script.actor = actor
        return [
            script.run("requested", at: 0), script.job(1, "deploy", "queued", createdAt: 1),
            script.job(1, "deploy", "waiting", createdAt: 1, environment: "production"),
        ]
    }

    static let routing = RoutingSettings(members: ["mona": "usr_mona", "hubot": "usr_hubot", "octocat": "usr_octo"])

    @Test("with routing: one review per approver, to their member, each a recipient of its own; the actor left out")
    func perApproverWithRouting() throws {
        var engine = Self.engine(approvers: ["Mona", "hubot", "octocat", "nobody-mapped"], routing: Self.routing)
        let alerts = AlertTests.play(Self.waiting(actor: "octocat"), on: &engine)
        let reviews = alerts.filter { $0.reason == .waiting }
        #expect(reviews.map(\.recipient) == ["hubot", "mona"], "sorted; the actor and the unmapped left out")
        #expect(reviews.map { $0.body["target"]?["members"] } == [["usr_hubot"], ["usr_mona"]])
        for review in reviews {
            #expect(review.body["actions"]?.arrayValue?.map { $0["id"] } == ["approve", "reject"])
            #expect(NotificationContract.violations(review.body).isEmpty)
        }
    }

    @Test("without routing: one review for every approver, to everyone the key reaches")
    func oneReviewWithoutRouting() throws {
        var engine = Self.engine(approvers: ["mona", "hubot"])
        let reviews = AlertTests.play(Self.waiting(), on: &engine).filter { $0.reason == .waiting }
        #expect(reviews.count == 1)
        #expect(reviews.first?.recipient == "the key's owner, one of hubot, mona")
        #expect(reviews.first?.body["target"] == nil)
    }

    @Test("the run's own actor (or who started the attempt) is never a reviewer; with no one left, no review")
    func selfReviewPrevented() throws {
        var engine = Self.engine(approvers: ["octocat"], routing: Self.routing)
        let alerts = AlertTests.play(Self.waiting(actor: "OctoCat"), on: &engine)
        #expect(alerts.isEmpty, "the only approver started the run: no review, no button")
        let key = RunKey(repository: "acme/widgets", runID: 5, attempt: 1)
        let state = try #require(engine.runs[key])
        #expect(engine.offers(for: state) == [.cancel], "Approve is not offered to nobody")
        #expect(
            Reviewer.of(state, approvers: ["octocat", "mona"], routing: RoutingSettings()).first?.approvers == ["mona"])
    }

    @Test("a rule's approvers are lower-cased; the configuration refuses approve without them")
    func configuration() throws {
        #expect(ActionRule(offer: [.approve], approvers: ["Mona"]).approvers == ["mona"])
        #expect(throws: ConfigurationError.self) {
            try BridgeConfiguration(
                json: Data(
                    #"{"github": {"webhook_secrets": ["s"], "api": {"token": "t"}}, "actions": {"public_url": "https://h.example", "rules": [{"offer": ["approve"]}]}}"#
                        .utf8))
        }
    }
}
