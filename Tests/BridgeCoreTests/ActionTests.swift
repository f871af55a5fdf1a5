import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

/// Buttons that act on GitHub, in the core: the `actions` section, which runs get which buttons
/// (rules), what the card and the notifications carry, when an action still makes sense, and
/// what a card says once a button was pressed.
@Suite("actions")
struct ActionTests {
    static let publicURL = "https://hooks.example.com"
    static let failing = AlertTests.failing

    static func configuration(_ actions: String, api: Bool = true) throws(ConfigurationError) -> BridgeConfiguration {
        let github = api ? #", "api": {"token": "ghp_x"}"# : ""
        return try BridgeConfiguration(
            json: Data(#"{"github": {"webhook_secrets": ["s"]\#(github)}, "actions": \#(actions)}"#.utf8))
    }

    static func problem(_ actions: String, api: Bool = true) -> ConfigurationError? {
        do throws(ConfigurationError) {
            _ = try configuration(actions, api: api)
            return nil
        } catch {
            return error
        }
    }

    /// An engine with `actions` (every button by default) and alerts on the default branch.
    static func engine(
        _ settings: ActionSettings = ActionSettings(publicURL: publicURL, rules: reviewRules),
        alertRules: [AlertRule] = [.onDefaultBranch]
    ) -> BridgeEngine {
        AlertTests.engine(alertRules, actions: settings)
    }

    /// Every button, Approve and Reject for `mona`, who starts no run of these tests.
    static let reviewRules = [ActionRule(offer: [.rerun, .cancel, .approve], approvers: ["mona"])]

    /// The card's content as PushWard last took it.
    static func card(_ engine: BridgeEngine) -> [String: JSONValue] {
        engine.sessions.values.first?.acknowledged?.content ?? [:]
    }

    /// Sends (and acknowledges) every request the engine has for its cards at `now`; how many.
    @discardableResult
    static func drain(_ engine: inout BridgeEngine, at now: UnixTime) -> Int {
        var sent = 0
        for slug in engine.sessions.keys.sorted() {
            while sent < 20, case .send(let planned) = engine.decide(slug: slug, at: now) {
                engine.acknowledge(planned, at: now)
                sent += 1
            }
        }
        return sent
    }

    // MARK: Configuration

    @Test("the section: public_url required, a trailing slash dropped, defaults of an hour, Face ID and every button")
    func defaults() throws {
        let settings = try #require(try Self.configuration(#"{"public_url": "https://hooks.example.com/"}"#).actions)
        #expect(settings.publicURL == "https://hooks.example.com")
        #expect(settings.tokenTTL == 3_600)
        #expect(settings.requireAuthentication)
        #expect(settings.rules == [ActionRule(offer: [.rerun, .cancel])], "approve needs a rule naming approvers")
        let full = try #require(
            try Self.configuration(
                #"{"public_url": "https://hooks.example.com/bridge", "token_ttl": "10s", "require_authentication": false,"#
                    + #" "rules": [{"offer": ["rerun"], "repositories": ["acme/*"], "workflows": ["CI"], "branches": ["main"]},"#
                    + #" {"offer": ["cancel", "approve"], "approvers": ["mona"]}]}"#
            ).actions)
        #expect(full.tokenTTL == 10)
        #expect(!full.requireAuthentication)
        #expect(full.rules.map(\.offer) == [[.rerun], [.cancel, .approve, .reject]])
        #expect(full.placeholderURL(.cancel) == "https://hooks.example.com/bridge/actions/{cancel}")
        #expect(try Self.configuration(#"{"public_url": "http://127.0.0.1:8080"}"#).actions != nil, "loopback http")
        #expect(try Self.configuration(#"{"public_url": "https://x.example"}"#).sendsNotifications)
    }

    @Test(
        "each mistake is an error naming its key",
        arguments: [
            (#"{}"#, "actions.public_url"),
            (#"{"public_url": ""}"#, "actions.public_url"),
            (#"{"public_url": "ftp://hooks.example.com"}"#, "actions.public_url"),
            (#"{"public_url": "http://hooks.example.com"}"#, "actions.public_url"),
            (#"{"public_url": "https://hooks.example.com/?a=1"}"#, "actions.public_url"),
            (#"{"public_url": "https://hooks.example.com/#x"}"#, "actions.public_url"),
            (#"{"public_url": "https://h.example", "token_ttl": "5s"}"#, "actions.token_ttl"),
            (#"{"public_url": "https://h.example", "token_ttl": "8d"}"#, "actions.token_ttl"),
            (
                #"{"public_url": "https://h.example", "require_authentication": "yes"}"#,
                "actions.require_authentication"
            ),
            (#"{"public_url": "https://h.example", "rules": [{}]}"#, "actions.rules[0].offer"),
            (#"{"public_url": "https://h.example", "rules": [{"offer": ["deploy"]}]}"#, "actions.rules[0].offer"),
            (#"{"public_url": "https://h.example", "rules": [{"offer": ["reject"]}]}"#, "actions.rules[0].offer"),
            (#"{"public_url": "https://h.example", "rules": [{"offer": ["approve"]}]}"#, "actions.rules[0].approvers"),
            (
                #"{"public_url": "https://h.example", "rules": [{"offer": ["approve"], "approvers": ["no spaces"]}]}"#,
                "actions.rules[0].approvers"
            ),
            (
                #"{"public_url": "https://h.example", "rules": [{"offer": ["approve"], "approvers": ["-mona"]}]}"#,
                "actions.rules[0].approvers"
            ),
            (
                #"{"public_url": "https://h.example", "rules": [{"offer": [], "actors": ["x"]}]}"#,
                "actions.rules[0].actors"
            ),
            (#"{"public_url": "https://h.example", "secret": "x"}"#, "actions.secret"),
        ])
    func mistakes(json: String, key: String) {
        let error = Self.problem(json)
        #expect(error?.key == key, "\(json): \(String(describing: error))")
        #expect(error?.problem.isEmpty == false)
    }

    @Test("actions without github.api is an error that says what the token needs")
    func needsTheAPI() {
        let error = Self.problem(#"{"public_url": "https://h.example"}"#, api: false)
        #expect(error?.key == "actions")
        #expect(error?.problem.contains("github.api") == true)
    }

    @Test("an alert rule cannot ask for the refusals of actions: those are always sent")
    func actionAlertsAreNotConfigurable() throws {
        let error: ConfigurationError? = {
            do throws(ConfigurationError) {
                _ = try BridgeConfiguration(json: Data(#"{"alerts": {"rules": [{"when": ["action"]}]}}"#.utf8))
                return nil
            } catch { return error }
        }()
        #expect(error?.key.hasPrefix("alerts.rules[0].when") == true, "\(String(describing: error))")
    }

    // MARK: Rules

    @Test("the first rule covering a run decides its buttons; approve brings reject; no rule, no button")
    func rules() {
        let settings = ActionSettings(
            publicURL: Self.publicURL,
            rules: [
                ActionRule(offer: [.rerun], branches: [GlobPattern("release/*")]),
                ActionRule(offer: [.cancel, .approve], repositories: [GlobPattern("acme/*")]),
            ])
        func subject(_ repository: String, _ branch: String) -> AlertSubject {
            AlertSubject(
                repository: repository, workflow: "CI", branch: branch, defaultBranch: "main", event: "push",
                actor: "octocat")
        }
        #expect(settings.offers(for: subject("acme/widgets", "release/1.2")) == [.rerun], "first match wins")
        #expect(settings.offers(for: subject("acme/widgets", "main")) == [.cancel, .approve, .reject])
        #expect(settings.offers(for: subject("other/repo", "main")).isEmpty)
        #expect(ActionRule(offer: [.reject]).offer.isEmpty, "reject comes only with approve")
    }

    // MARK: What the card and the notifications carry

    @Test("a running card offers Cancel; a failed end frame and its alert offer the re-run; a success offers nothing")
    func buttons() throws {
        var engine = Self.engine()
        let script = RunScript(runID: 1)
        let events = script.deliveries(waves: Self.failing)
        var alerts = AlertTests.play(Array(events.prefix(4)), on: &engine)
        let running = Self.card(engine)
        #expect(
            running["secondary_url_action"] == [
                "url": "https://hooks.example.com/actions/{cancel}", "title": "Cancel", "method": "POST",
            ])
        #expect(running["secondary_url"] == "https://github.com/acme/widgets/commit/abc123", "older apps keep the link")
        alerts += AlertTests.play(Array(events.dropFirst(4)), on: &engine)
        let ended = Self.card(engine)
        #expect(ended["secondary_url_action"]?["url"] == "https://hooks.example.com/actions/{rerun}")
        #expect(ended["secondary_url_action"]?["title"] == "Re-run failed jobs")
        let alert = try #require(alerts.first { $0.reason == .failure })
        #expect(
            alert.body["actions"] == [
                [
                    "id": "rerun", "title": "Re-run failed jobs", "url": "https://hooks.example.com/actions/{rerun}",
                    "method": "POST", "authentication_required": true,
                ]
            ])
        #expect(NotificationContract.violations(alert.body).isEmpty)

        var passing = Self.engine(ActionSettings(publicURL: Self.publicURL, requireAuthentication: false))
        _ = AlertTests.play(RunScript(runID: 2).deliveries(waves: AlertTests.passing), on: &passing)
        #expect(Self.card(passing)["secondary_url_action"]?["title"] == "Commit", "a success keeps the plain link")
    }

    @Test("a run waiting on an environment sends Approve and Reject even without an alert rule for it")
    func review() throws {
        var engine = Self.engine(
            ActionSettings(publicURL: Self.publicURL, requireAuthentication: false, rules: Self.reviewRules),
            alertRules: [])
        let script = RunScript(runID: 3)
        let alerts = AlertTests.play(
            [
                script.run("requested", at: 0), script.job(1, "deploy", "queued", createdAt: 1),
                script.job(1, "deploy", "waiting", createdAt: 1, environment: "production"),
            ], on: &engine)
        let alert = try #require(alerts.first)
        #expect(alerts.map(\.reason) == [.waiting])
        let actions = try #require(alert.body["actions"]?.arrayValue)
        #expect(actions.map { $0["id"] } == ["approve", "reject"])
        #expect(actions.map { $0["authentication_required"] } == [false, false], "as configured")
        #expect(actions.map { $0["destructive"] } == [nil, true])
        #expect(NotificationContract.violations(alert.body).isEmpty)
        #expect(engine.waitingEnvironment(of: RunKey(repository: "acme/widgets", runID: 3, attempt: 1)) == "production")
        var without = AlertTests.engine([])
        #expect(AlertTests.play(script.deliveries(waves: Self.failing), on: &without).isEmpty)
    }

    @Test("the environment the queued delivery named is kept whatever the order: waiting-then-queued reviews it too")
    func environmentFromAnyDelivery() throws {
        let script = RunScript(runID: 31)
        let queued = script.job(1, "deploy", "queued", createdAt: 1, environment: "production")
        let waiting = script.job(1, "deploy", "waiting", createdAt: 1)
        for (label, order) in [("queued first", [queued, waiting]), ("waiting first", [waiting, queued])] {
            var engine = Self.engine(
                ActionSettings(publicURL: Self.publicURL, requireAuthentication: false, rules: Self.reviewRules),
                alertRules: [])
            let alerts = AlertTests.play([script.run("requested", at: 0)] + order, on: &engine)
            let key = RunKey(repository: "acme/widgets", runID: 31, attempt: 1)
            #expect(engine.waitingEnvironment(of: key) == "production", "\(label)")
            let actions = try #require(alerts.first?.body["actions"]?.arrayValue)
            #expect(actions.map { $0["id"] } == ["approve", "reject"])
            #expect(engine.runs[key]?.jobs[1]?.isWaiting == true, "still waiting: the older queued does not win")
        }
    }

    // MARK: Whether an action still makes sense

    @Test(
        "re-run only a failed, finished attempt with no newer one; cancel only while it goes; review only while waiting"
    )
    func applicability() {
        var engine = Self.engine()
        let failed = RunScript(runID: 4)
        _ = AlertTests.play(failed.deliveries(waves: Self.failing), on: &engine)
        let key = RunKey(repository: "acme/widgets", runID: 4, attempt: 1)
        #expect(engine.actionProblem(.rerun, on: key, environment: nil, newerAttemptStored: false) == nil)
        #expect(engine.actionProblem(.rerun, on: key, environment: nil, newerAttemptStored: true) != nil)
        #expect(engine.actionProblem(.cancel, on: key, environment: nil, newerAttemptStored: false) != nil)
        #expect(engine.actionProblem(.approve, on: key, environment: nil, newerAttemptStored: false) != nil)
        var second = failed
        second.attempt = 2
        _ = AlertTests.play([second.run("requested", at: 50)], on: &engine)
        #expect(engine.actionProblem(.rerun, on: key, environment: nil, newerAttemptStored: false) != nil)

        let running = RunScript(runID: 5)
        _ = AlertTests.play(
            [
                running.run("requested", at: 0), running.job(1, "deploy", "queued", createdAt: 1),
                running.job(1, "deploy", "waiting", createdAt: 1, environment: "staging"),
            ], on: &engine)
        let live = RunKey(repository: "acme/widgets", runID: 5, attempt: 1)
        #expect(engine.actionProblem(.cancel, on: live, environment: nil, newerAttemptStored: false) == nil)
        #expect(engine.actionProblem(.rerun, on: live, environment: nil, newerAttemptStored: false) != nil)
        #expect(engine.actionProblem(.approve, on: live, environment: "staging", newerAttemptStored: false) == nil)
        #expect(engine.actionProblem(.reject, on: live, environment: "production", newerAttemptStored: false) != nil)
        let unknown = RunKey(repository: "acme/widgets", runID: 99, attempt: 1)
        #expect(engine.actionProblem(.cancel, on: unknown, environment: nil, newerAttemptStored: false) != nil)
    }

    /// GitHub's recorded deliveries of one waiting job: the `waiting` one (no `deployment`
    /// object) and the `queued` one that names the environment.
    static func recordedReviewDeliveries() throws -> (waiting: WebhookEvent, named: WebhookEvent) {
        func decode(_ name: String) throws -> WebhookEvent {
            try WebhookDecoder.decode(event: "workflow_job", body: Fixtures.data(name), contentType: "application/json")
        }
        return (try decode("workflow_job.waiting.json"), try decode("workflow_job.queued.with-deployment.json"))
    }

    /// The `workflow_run` of the recorded review's run, from the repository itself: a review is
    /// offered only once the run is known not to be a fork's (ForkTests).
    static func recordedReviewRun() -> WebhookEvent {
        var script = RunScript(runID: 4_747_967_848)
        script.repository = Repository(
            fullName: "lineville/elastic-machines-testing",
            htmlURL: "https://github.com/lineville/elastic-machines-testing",
            defaultBranch: "main")
        return script.run("requested", at: 0)
    }

    @Test("a review's environment: the one a delivery names, else GitHub's only pending one; never empty or a guess")
    func reviewEnvironment() throws {
        let (waiting, named) = try Self.recordedReviewDeliveries()
        let key = RunKey(repository: "lineville/elastic-machines-testing", runID: 4_747_967_848, attempt: 1)
        var engine = Self.engine()
        _ = AlertTests.play([Self.recordedReviewRun(), waiting], on: &engine)
        #expect(engine.runs[key] != nil)
        #expect(engine.reviewNeedsPendingDeployments(key), "GitHub's waiting delivery names no environment")
        #expect(engine.reviewEnvironment(of: key, pending: nil) == nil)
        #expect(engine.reviewEnvironment(of: key, pending: []) == nil)
        #expect(engine.reviewEnvironment(of: key, pending: [""]) == nil, "an empty name never gets a button")
        #expect(engine.reviewEnvironment(of: key, pending: ["Test"]) == "Test")
        #expect(engine.reviewEnvironment(of: key, pending: ["staging", "production"]) == nil, "which one: unknown")
        let hostile = "prod\u{202E}noitcudorp\u{202C} «東京» 👩‍🚀\u{0}"
        #expect(engine.reviewEnvironment(of: key, pending: [hostile]) == hostile, "compared with GitHub's as it is")
        // A token minted from GitHub's answer still applies while the job's own name is unknown.
        #expect(engine.actionProblem(.approve, on: key, environment: "Test", newerAttemptStored: false) == nil)
        #expect(engine.actionProblem(.approve, on: key, environment: "", newerAttemptStored: false) != nil)
        #expect(engine.actionProblem(.reject, on: key, environment: nil, newerAttemptStored: false) != nil)

        // Both orders end with the environment named by the queued delivery.
        for order in [[waiting, named], [named, waiting]] {
            var engine = Self.engine()
            _ = AlertTests.play([Self.recordedReviewRun()] + order, on: &engine)
            #expect(!engine.reviewNeedsPendingDeployments(key))
            #expect(engine.reviewEnvironment(of: key, pending: nil) == "Test")
            #expect(engine.reviewEnvironment(of: key, pending: ["staging", "production"]) == "Test")
            #expect(engine.actionProblem(.approve, on: key, environment: "Test", newerAttemptStored: false) == nil)
            #expect(engine.actionProblem(.approve, on: key, environment: "staging", newerAttemptStored: false) != nil)
        }
    }

    // MARK: What a press shows

    @Test("a press is said on the card instead of the button; a refusal plans an alert; hostile text is made plain")
    func notes() throws {
        var engine = Self.engine()
        let script = RunScript(runID: 6)
        let events = script.deliveries(waves: Self.failing)
        _ = AlertTests.play(events, on: &engine)
        let key = RunKey(repository: "acme/widgets", runID: 6, attempt: 1)
        Self.drain(&engine, at: (engine.runs[key]?.lastChangeAt ?? 0) + 1)
        #expect(Self.card(engine)["state"] == "Failed: test (linux) · Run")
        let now = (engine.runs[key]?.lastChangeAt ?? 0) + 5
        engine.noteAction(
            .rerun, on: key, text: ActionKind.rerun.requested(by: "m\u{202E}allory\n👩🏽‍💻"), failed: false, at: now,
            history: RunHistory())
        #expect(Self.drain(&engine, at: now) > 0, "the note is a change worth a push")
        let content = Self.card(engine)
        #expect(content["state"] == "Re-run requested by mallory 👩🏽‍💻")
        #expect(content["secondary_url_action"]?["url"]?.stringValue?.contains("/actions/") != true, "no second press")
        #expect(engine.takeChanges().alerts.isEmpty, "a request is not an alert")

        let refusal =
            "Re-run failed: \u{2066}Resource not accessible\u{2069} by integration\r\n"
            + String(repeating: "é", count: 300)
        engine.noteAction(.rerun, on: key, text: refusal, failed: true, at: now + 1, history: RunHistory())
        Self.drain(&engine, at: now + 1)
        let state = try #require(Self.card(engine)["state"]?.stringValue)
        #expect(state.hasPrefix("Re-run failed: Resource not accessible by integration"))
        #expect(!state.unicodeScalars.contains { [0x2066, 0x2069, 0x0D, 0x0A].contains($0.value) })
        let alert = try #require(engine.takeChanges().alerts.first)
        #expect(alert.reason == .actionFailed)
        #expect(alert.body["title"] == "acme/widgets · CI: re-run failed")
        #expect(NotificationContract.violations(alert.body).isEmpty, "\(NotificationContract.violations(alert.body))")

    }

    @Test("what a press says names the person, or the phone when routing does not know them")
    func requestedText() {
        #expect(ActionKind.cancel.requested(by: nil) == "Cancel requested from a phone")
        #expect(ActionKind.approve.requested(by: "octo\u{202E}cat") == "Approved by octocat")
        #expect(ActionKind.reject.requested(by: "a\u{0}b") == "Rejected by a b")
        #expect(ActionKind.allCases.map(\.failedHeadline).allSatisfy { $0.hasSuffix("failed") })
    }
}
