import Foundation
import Testing

@testable import BridgeCore

/// What `github hooks` decides from GitHub's list of hooks: create the bridge's, fix only what is
/// wrong with it (keeping its other events, sending the secret with any `config`), or nothing.
@Suite("Hook plan")
struct HookPlanTests {
    static let url = "https://hooks.example.com/webhook"
    static let secret = "0123456789abcdef0123"

    static func hook(
        id: Int = 7, active: Bool = true, events: [String] = ["workflow_job", "workflow_run"], url: String? = url,
        contentType: String? = "json", insecureSSL: String = "0", hasSecret: Bool = true
    ) -> WebhookHook {
        WebhookHook(
            id: id, active: active, events: events, url: url, contentType: contentType, insecureSSL: insecureSSL,
            hasSecret: hasSecret)
    }

    @Test("no hook on the URL: one is created as GitHub documents it, with the secret and TLS checked")
    func creates() throws {
        let other = Self.hook(id: 3, url: "https://elsewhere.example.com/hook")
        let plan = HookPlan(hooks: [other], url: Self.url, secret: Self.secret)
        #expect(plan.hook == nil)
        #expect(plan.problems == [.missing])
        guard case .create(let body) = plan.action else {
            Issue.record("expected a creation, got \(plan.action)")
            return
        }
        #expect(body["name"] == "web")
        #expect(body["active"] == true)
        #expect(body["events"] == ["workflow_job", "workflow_run"])
        #expect(body["config"]?["url"]?.stringValue == Self.url)
        #expect(body["config"]?["content_type"] == "json")
        #expect(body["config"]?["secret"]?.stringValue == Self.secret)
        #expect(body["config"]?["insecure_ssl"] == "0")
    }

    @Test("a right hook: nothing to write, no problem")
    func leavesRightHookAlone() {
        for events in [["workflow_job", "workflow_run"], ["push", "workflow_run", "workflow_job"]] {
            let plan = HookPlan(hooks: [Self.hook(events: events)], url: Self.url, secret: Self.secret)
            #expect(plan.action == .none, "\(events)")
            #expect(plan.problems.isEmpty, "\(events)")
        }
    }

    @Test("a hook that sends every event (*) is too wide: the fix narrows it to the two events")
    func narrowsEveryEvent() {
        for events in [["*"], ["*", "push"]] {
            let plan = HookPlan(hooks: [Self.hook(events: events)], url: Self.url, secret: Self.secret)
            #expect(plan.problems == [.tooWide], "\(events)")
            #expect(plan.action == .update(id: 7, ["events": ["workflow_job", "workflow_run"]]), "\(events)")
        }
        #expect(HookProblem.tooWide.code == "too_wide")
    }

    @Test("inactive: only active is sent")
    func activates() {
        let plan = HookPlan(hooks: [Self.hook(active: false)], url: Self.url, secret: Self.secret)
        #expect(plan.problems == [.inactive])
        #expect(plan.action == .update(id: 7, ["active": true]))
    }

    @Test("a missing event is added and the hook's other events stay")
    func addsEventKeepingOthers() {
        let plan = HookPlan(hooks: [Self.hook(events: ["push", "workflow_job"])], url: Self.url, secret: Self.secret)
        #expect(plan.problems == [.missingEvent("workflow_run")])
        #expect(plan.action == .update(id: 7, ["events": ["push", "workflow_job", "workflow_run"]]))
    }

    @Test("a form, skipped TLS checks or no secret: the whole config is sent, the secret with it")
    func fixesConfigWithSecret() {
        let cases: [(WebhookHook, [HookProblem])] = [
            (Self.hook(contentType: "form"), [.formContentType]),
            (Self.hook(insecureSSL: "1"), [.skipsTLSVerification]),
            (Self.hook(hasSecret: false), [.noSecret]),
        ]
        for (hook, problems) in cases {
            let plan = HookPlan(hooks: [hook], url: Self.url, secret: Self.secret)
            #expect(plan.problems == problems)
            let config: JSONValue = [
                "url": .string(Self.url), "content_type": "json", "secret": .string(Self.secret), "insecure_ssl": "0",
            ]
            #expect(plan.action == .update(id: 7, ["config": config]), "\(problems)")
        }
    }

    @Test("every problem at once is fixed in one PATCH")
    func fixesEverything() {
        let plan = HookPlan(
            hooks: [Self.hook(active: false, events: ["issues"], contentType: "form", insecureSSL: "1")],
            url: Self.url, secret: Self.secret)
        #expect(
            plan.problems == [
                .inactive, .missingEvent("workflow_job"), .missingEvent("workflow_run"), .formContentType,
                .skipsTLSVerification,
            ])
        guard case .update(_, let body) = plan.action else {
            Issue.record("expected an update")
            return
        }
        #expect(body["active"] == true)
        #expect(body["events"] == ["issues", "workflow_job", "workflow_run"])
        #expect(body["config"]?["secret"]?.stringValue == Self.secret)
    }

    @Test("GitHub's list is read as GitHub writes it: a masked secret is a set secret, insecure_ssl as a number")
    func readsGitHubsShape() throws {
        let listed = try JSONValue(
            parsing: Data(
                #"""
                {"type": "Repository", "id": 12, "name": "web", "active": true, "events": ["workflow_run"],
                 "config": {"url": "https://hooks.example.com/webhook", "content_type": "form", "insecure_ssl": 1,
                            "secret": "********"}}
                """#.utf8))
        let hook = try #require(WebhookHook(listed))
        #expect(hook.id == 12)
        #expect(hook.hasSecret)
        #expect(hook.insecureSSL == "1")
        #expect(
            HookPlan.problems(of: hook) == [.missingEvent("workflow_job"), .formContentType, .skipsTLSVerification])
        let bare = try #require(WebhookHook(["id": 1, "active": true, "config": ["url": "x"]]))
        #expect(!bare.hasSecret)
        #expect(WebhookHook(["name": "web"]) == nil, "no id: nothing could be done with it")
    }

    @Test("--repo and --org accept GitHub names only, so a path built from them needs no escaping")
    func ownerNames() {
        #expect(HookOwner(repository: "acme/rocket")?.hooksPath == "/repos/acme/rocket/hooks")
        #expect(HookOwner(organization: "acme")?.hooksPath == "/orgs/acme/hooks")
        for bad in [
            "acme", "acme/", "/rocket", "acme/rocket/x", "acme/..", "ac me/rocket", "acme/\u{202E}kcor", "a/\0",
        ] {
            #expect(HookOwner(repository: bad) == nil, "\(bad)")
        }
        for bad in ["", "..", "ac/me", "acme\u{1B}[2J"] { #expect(HookOwner(organization: bad) == nil, "\(bad)") }
        #expect(HookOwner(repository: "acme/rocket")?.permissionNeeded.contains("admin:repo_hook") == true)
        #expect(HookOwner(organization: "acme")?.permissionNeeded.contains("admin:org_hook") == true)
    }
}
