import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

/// Routing a run to its person (organisation keys): the mapping, the per-person slug, `target`
/// on the create and on alerts, and a refused target turning routing off without losing a card.
@Suite("routing")
struct RoutingTests {
    static let routing = RoutingSettings(
        members: ["OctoCat": "usr_1", "hubot": "usr_2"],
        groups: [.init(repositories: GlobPattern("acme/pay*"), names: ["payments"])],
        tags: [.init(repositories: GlobPattern("acme/payments"), names: ["on-call"])])

    static func engine(_ routing: RoutingSettings = Self.routing, alerts: Bool = false) -> BridgeEngine {
        AlertTests.engine(alerts ? [AlertRule(when: [.failure])] : [], routing: routing)
    }

    static func script(_ runID: Int, actor: String, repository: String = "acme/widgets") -> RunScript {
        var script = RunScript(runID: runID, start: 1_700_000_000 + Double(runID) * 1_000)
        script.actor = actor
        script.repository = Repository(
            fullName: repository, htmlURL: "https://github.com/\(repository)", defaultBranch: "main")
        return script
    }

    /// Plays `events`, answering every request with `answer` (nil: acknowledged), and returns the
    /// requests planned.
    static func play(
        _ events: [WebhookEvent], on engine: inout BridgeEngine,
        answer: (PlannedRequest) -> PushWardAnswer? = { _ in nil }
    ) -> [PlannedRequest] {
        var now: UnixTime = 1_700_000_000
        var sent: [PlannedRequest] = []
        for event in events {
            now += 1
            _ = engine.receive(event, at: now)
            var more = true
            while more {
                more = false
                for slug in engine.sessions.keys.sorted() {
                    guard case .send(let planned) = engine.decide(slug: slug, at: now) else { continue }
                    sent.append(planned)
                    _ = engine.handle(answer(planned) ?? .success(status: 200), for: planned, at: now, jitter: 0)
                    more = true
                }
            }
        }
        return sent
    }

    @Test("logins map case-insensitively to members; repositories to groups and tags; the rest by default")
    func mapping() {
        #expect(
            Self.routing.route(repository: "acme/payments", person: "octocat")
                == .target(
                    ActivityTarget(members: ["usr_1"], groups: ["payments"], tags: ["on-call"]), person: "octocat"))
        #expect(
            Self.routing.route(repository: "acme/payroll", person: "someone")
                == .target(ActivityTarget(groups: ["payments"]), person: nil), "a group alone: no card of one's own")
        #expect(Self.routing.route(repository: "acme/widgets", person: "someone") == .everyone)
        #expect(Self.routing.route(repository: "acme/widgets", person: nil) == .everyone)
        var nobody = Self.routing
        nobody.fallback = .nobody
        #expect(nobody.route(repository: "acme/widgets", person: "someone") == .nobody)
        #expect(nobody.route(repository: "acme/widgets", person: "HUBOT").target == ActivityTarget(members: ["usr_2"]))
    }

    @Test("a mapped person's run draws on a card of their own, created with target; others keep the scheme")
    func personalCard() throws {
        var engine = Self.engine()
        let octo = Self.play(Self.script(1, actor: "octocat").deliveries(waves: AlertTests.passing), on: &engine)
        let other = Self.play(Self.script(2, actor: "someone").deliveries(waves: AlertTests.passing), on: &engine)
        let repository = Repository(fullName: "acme/widgets", htmlURL: nil)
        let shared = ActivityIdentity.forRun(repository: repository, workflow: "CI", scope: .repository).slug
        let personal = ActivityIdentity.forRun(
            repository: repository, workflow: "CI", scope: .repository, person: "octocat"
        ).slug
        #expect(personal == shared + "-u" + SHA256.hexDigest(of: "octocat").prefix(8))
        let create = try #require(octo.first { $0.kind == .create })
        #expect(create.request.slug == personal)
        #expect(create.request.body["target"] == ["members": ["usr_1"]])
        #expect(octo.filter { $0.kind != .create }.allSatisfy { $0.request.body["target"] == nil }, "PATCH keeps it")
        let unmapped = try #require(other.first { $0.kind == .create })
        #expect(unmapped.request.slug == shared)
        #expect(unmapped.request.body["target"] == nil)
    }

    @Test("a job delivery before the run's: the sender is the person, so the slug is right from the start")
    func jobFirst() throws {
        var engine = Self.engine()
        let script = Self.script(3, actor: "octocat")
        guard case .workflowJob(var job) = script.job(1, "lint", "queued", createdAt: 1) else { return }
        job.sender = "octocat"
        _ = engine.receive(.workflowJob(job), at: 1_700_000_001)
        let key = RunKey(repository: "acme/widgets", runID: 3, attempt: 1)
        #expect(engine.slugs[key]?.hasSuffix("-u" + SHA256.hexDigest(of: "octocat").prefix(8)) == true)
    }

    @Test("a 422 to a create with target: targets off for good, the card created at once without one")
    func refusedTarget() throws {
        var engine = Self.engine(alerts: true)
        let refusal = PushWardAnswer.problem(
            PushWardProblem(status: 422, code: "request.validation_failed", detail: "target: personal key"))
        var refusals = 0
        let sent = Self.play(
            Self.script(4, actor: "octocat").deliveries(waves: AlertTests.failing), on: &engine
        ) { planned in
            guard planned.request.body["target"] != nil else { return nil }
            refusals += 1
            return refusal
        }
        #expect(refusals == 1)
        let creates = sent.filter { $0.kind == .create }
        #expect(creates.count == 2)
        #expect(creates.last?.request.body["target"] == nil)
        #expect(engine.gate.targetsRefusedAt != nil)
        #expect(sent.last?.kind == .end, "the card went through its whole life")
        let alert = try #require(engine.takeChanges().alerts.first)
        #expect(alert.body["target"] == nil, "alerts stop carrying one too")

        // Another key: targets are tried again.
        engine.useKey(fingerprint: BridgeEngine.fingerprint(ofKey: "hlk_org"))
        #expect(engine.gate.targetsRefusedAt == nil)
    }

    @Test("alerts carry the run's target; with routing.default nobody an unmapped run gets no card and no alert")
    func alertsAndNobody() throws {
        var engine = Self.engine(alerts: true)
        _ = Self.play(Self.script(5, actor: "hubot").deliveries(waves: AlertTests.failing), on: &engine)
        let alert = try #require(engine.takeChanges().alerts.first)
        #expect(alert.body["target"] == ["members": ["usr_2"]])

        var nobody = Self.routing
        nobody.fallback = .nobody
        var quiet = Self.engine(nobody, alerts: true)
        let sent = Self.play(Self.script(6, actor: "someone").deliveries(waves: AlertTests.failing), on: &quiet)
        #expect(sent.isEmpty)
        #expect(quiet.takeChanges().alerts.isEmpty)
        let state = try #require(quiet.runs[RunKey(repository: "acme/widgets", runID: 6, attempt: 1)])
        #expect(state.cardDecision?.level == nil)
        #expect(state.cardDecision?.reason.contains("routing") == true)
    }

    @Test("configuration: members, groups, tags, default; a wrong value names its key")
    func configuration() throws {
        let parsed = try BridgeConfiguration(
            json: Data(
                #"{"routing": {"members": {"OctoCat": "usr_1"}, "groups": {"acme/*": ["payments"]}, "default": "nobody"}}"#
                    .utf8))
        #expect(parsed.routing.members == ["octocat": "usr_1"])
        #expect(parsed.routing.groups == [.init(repositories: GlobPattern("acme/*"), names: ["payments"])])
        #expect(parsed.routing.fallback == .nobody)
        #expect(!(try BridgeConfiguration(json: Data("{}".utf8))).routing.isEnabled)
        for (json, key) in [
            (#"{"routing": {"members": {"octocat": ""}}}"#, "routing.members.octocat"),
            (#"{"routing": {"groups": {"acme/*": []}}}"#, "routing.groups.acme/*"),
            (#"{"routing": {"default": "some"}}"#, "routing.default"),
            (#"{"routing": {"teams": {}}}"#, "routing.teams"),
        ] {
            do {
                _ = try BridgeConfiguration(json: Data(json.utf8))
                Issue.record("\(json) was accepted")
            } catch {
                #expect(error.key == key)
            }
        }
    }
}
