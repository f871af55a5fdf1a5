import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

/// Runs from forks in the core: the decoder reads `head_repository`, a run knows its origin, rules
/// cover a fork's run only with `"forks": true`, it gets no button, its "fixed" and alert
/// replacement stay apart from the repository's, and every surface says whose code it is.
@Suite("forks")
struct ForkTests {
    static let fork = "mallory/rocket"
    static let key = RunKey(repository: "acme/widgets", runID: 1, attempt: 1)

    static func decodedRun(_ name: String) throws -> WorkflowRunEvent {
        guard
            case .workflowRun(let event) = try WebhookDecoder.decode(
                event: "workflow_run", body: Fixtures.data(name), contentType: "application/json")
        else { throw CocoaError(.coderReadCorrupt) }
        return event
    }

    static func state(_ event: WebhookEvent) -> RunState? {
        var engine = BridgeEngine()
        guard case .applied(let key) = engine.receive(event, at: 1_700_000_100, history: RunHistory()) else {
            return nil
        }
        return engine.runs[key]
    }

    // MARK: Decoding

    @Test("the recorded pull_request from a fork: head_repository's name and id, the event, a fork origin")
    func recordedForkRun() throws {
        for name in [
            "corpus/workflow_run.pkg-pr-new.pr-fork-requested.json",
            "corpus/workflow_run.pkg-pr-new.pr-fork-completed-failure.json",
        ] {
            let event = try Self.decodedRun(name)
            #expect(event.run.headRepository == "stackblitz-labs/temporary-test-fork", "\(name)")
            #expect(event.run.headRepositoryID == 780_616_470)
            #expect(event.run.event == "pull_request")
            #expect(event.repository.fullName == "stackblitz-labs/temporary-test")
            let state = try #require(Self.state(.workflowRun(event)))
            #expect(state.origin == .fork(headRepository: "stackblitz-labs/temporary-test-fork"))
        }
    }

    @Test("a recorded push run's head repository is its own: base origin")
    func recordedBaseRun() throws {
        let event = try Self.decodedRun("corpus/workflow_run.octokit.requested.json")
        #expect(event.run.headRepository == event.repository.fullName)
        #expect(Self.state(.workflowRun(event))?.origin == .base)
    }

    @Test("the pull_request_target variant decodes to a fork run of the scenario's names")
    func pullRequestTarget() throws {
        var payload = ForkRunPayload(runID: 1)
        payload.event = "pull_request_target"
        guard case .workflowRun(let event) = try payload.event("requested") else {
            Issue.record("not a workflow_run")
            return
        }
        #expect(event.run.event == "pull_request_target")
        #expect(event.run.headBranch == "main")
        #expect(event.run.name == "Deploy prod")
        #expect(event.repository.fullName == "acme/widgets")
        #expect(Self.state(.workflowRun(event))?.origin == .fork(headRepository: Self.fork))
    }

    @Test("origin: none before a run delivery; no head_repository is unknown for a pull request, base otherwise")
    func originRules() {
        #expect(RunOrigin.of(nil, repository: "acme/widgets") == .unknown)
        var run = WorkflowRun(id: 1, event: "push")
        #expect(RunOrigin.of(run, repository: "acme/widgets") == .base, "a sender without the field")
        for event in ["pull_request", "pull_request_target"] {
            run.event = event
            #expect(RunOrigin.of(run, repository: "acme/widgets") == .unknown, "a deleted fork: \(event)")
        }
        run.headRepository = "ACME/Widgets"
        #expect(RunOrigin.of(run, repository: "acme/widgets") == .base, "names compare as GitHub's do")
        run.headRepository = Self.fork
        #expect(RunOrigin.of(run, repository: "acme/widgets") == .fork(headRepository: Self.fork))

        // A run known only from its jobs has no origin yet; the run delivery gives it one.
        var script = ForkRunPayload(runID: 1).jobs
        let job = script.job(100, "deploy", "queued", createdAt: 1)
        #expect(Self.state(job)?.origin == .unknown)
        script.headRepository = nil
        script.event = "push"
        var engine = BridgeEngine()
        _ = engine.receive(job, at: 1, history: RunHistory())
        _ = engine.receive(script.run("requested", at: 0), at: 2, history: RunHistory())
        #expect(engine.runs[Self.key]?.origin == .base)
    }

    @Test("a stored run from before head_repository was kept reads back without it")
    func storedBeforeForks() throws {
        var state = RunState(key: Self.key, repository: Repository(fullName: "acme/widgets", htmlURL: nil), at: 1)
        state.run = WorkflowRun(id: 1, event: "push", headRepository: Self.fork, headRepositoryID: 7)
        let text = try #require(RunStateJSON.text(of: state))
        #expect(
            text.contains(#""headRepository":"mallory\/rocket""#)
                || text.contains(#""headRepository":"mallory/rocket""#))
        let decoded = try JSONDecoder().decode(RunState.self, from: Data(text.utf8))
        #expect(decoded.origin == .fork(headRepository: Self.fork))
        let old = text.replacingOccurrences(of: #","headRepositoryID":7"#, with: "")
            .replacingOccurrences(of: #","headRepository":"mallory\/rocket""#, with: "")
            .replacingOccurrences(of: #","headRepository":"mallory/rocket""#, with: "")
        #expect(!old.contains("headRepository"))
        #expect(try JSONDecoder().decode(RunState.self, from: Data(old.utf8)).origin == .base)
    }

    @Test("a recovery lookup's run object carries head_repository into the run")
    func recoveryLookup() throws {
        let run: JSONValue = [
            "id": 77, "run_attempt": 1, "name": "Deploy prod", "head_branch": "main", "event": "pull_request",
            "status": "in_progress", "html_url": "https://github.com/acme/widgets/actions/runs/77",
            "repository": ["full_name": "acme/widgets", "html_url": "https://github.com/acme/widgets"],
            "head_repository": ["id": 4_242, "full_name": "mallory/rocket"],
        ]
        let observations = try #require(APIObservation.observations(run: run, jobs: ["jobs": []]))
        let delivery = try #require(observations.last)
        #expect(delivery.event == "workflow_run")
        guard
            case .workflowRun(let event) = try WebhookDecoder.decode(
                event: delivery.event, body: delivery.body, contentType: "application/json")
        else {
            Issue.record("not a workflow_run")
            return
        }
        #expect(event.run.headRepository == Self.fork)
        #expect(event.run.headRepositoryID == 4_242)
        #expect(Self.state(.workflowRun(event))?.origin == .fork(headRepository: Self.fork))
    }

    // MARK: Rules

    static func subject(_ origin: RunOrigin) -> AlertSubject {
        AlertSubject(
            repository: "acme/widgets", workflow: "Deploy prod", branch: "main", defaultBranch: "main",
            event: "pull_request", actor: "mallory", origin: origin)
    }

    @Test("alert rules: a fork's run only with forks: true, and never as {default}")
    func alertRules() {
        let fork = Self.subject(.fork(headRepository: Self.fork))
        let everything = AlertRule(when: [.failure])
        let onMain = AlertRule(when: [.failure], branches: [GlobPattern("main")])
        #expect(everything.matches(.failure, Self.subject(.base)))
        #expect(!everything.matches(.failure, fork))
        #expect(!onMain.matches(.failure, fork))
        #expect(!AlertRule.onDefaultBranch.matches(.failure, fork))
        #expect(AlertRule.onDefaultBranch.matches(.failure, Self.subject(.base)))
        #expect(AlertRule(when: [.failure], branches: [GlobPattern("main")], forks: true).matches(.failure, fork))
        #expect(AlertRule(when: [.failure], forks: true).matches(.failure, fork))
        #expect(
            !AlertRule(when: [.failure], branches: [GlobPattern("{default}")], forks: true).matches(.failure, fork),
            "a fork's main is not the repository's default branch")
        #expect(onMain.matches(.failure, Self.subject(.unknown)), "an unknown origin is shown as usual")
    }

    @Test("action rules cover no fork's run and no run of unknown origin; the engine offers them nothing")
    func actionRules() {
        let rule = ActionRule(
            offer: [.cancel, .approve], workflows: [GlobPattern("Deploy*")], branches: [GlobPattern("main")])
        #expect(rule.covers(Self.subject(.base)))
        #expect(!rule.covers(Self.subject(.fork(headRepository: Self.fork))))
        #expect(!rule.covers(Self.subject(.unknown)))
        #expect(!ActionRule(offer: [.rerun]).covers(Self.subject(.fork(headRepository: Self.fork))))
        let settings = ActionSettings(publicURL: "https://hooks.example.com", rules: [rule])
        #expect(settings.offers(for: Self.subject(.base)) == [.cancel, .approve, .reject])
        #expect(settings.offers(for: Self.subject(.fork(headRepository: Self.fork))).isEmpty)
    }

    @Test("widgets follow a fork's run only with forks: true, and no run until its origin is known")
    func widgetRules() throws {
        let widget = WidgetSettings(slug: "ci-main", name: "CI on main", branches: [GlobPattern("main")])
        var opted = widget
        opted.forks = true
        let payload = ForkRunPayload(runID: 1)
        let forkState = try #require(Self.state(try payload.event("requested")))
        #expect(!widget.follows(forkState))
        #expect(opted.follows(forkState))
        let content = WidgetContent.content(
            for: forkState, plan: StepPlanner.plan(for: forkState), end: nil, icon: "hammer")
        #expect(content["subtitle"]?.stringValue?.hasPrefix("main · from mallory/rocket · ") == true)
        let jobOnly = try #require(Self.state(payload.jobs.job(100, "build", "queued", createdAt: 1)))
        #expect(!widget.follows(jobOnly) && !opted.follows(jobOnly))
        var base = payload.jobs
        base.headRepository = nil
        base.event = "push"
        let baseState = try #require(Self.state(base.run("requested", at: 0)))
        #expect(widget.follows(baseState))
    }

    @Test("configuration: forks on alert rules and widgets, false by default, a Boolean; refused on action rules")
    func configuration() throws {
        let configuration = try BridgeConfiguration(
            json: Data(
                #"""
                {"github": {"webhook_secrets": ["s"]},
                 "alerts": {"rules": [{"when": ["failure"], "forks": true}, {"when": ["failure"]}]},
                 "widgets": [{"slug": "a", "name": "A", "forks": true}, {"slug": "b", "name": "B"}]}
                """#.utf8))
        #expect(configuration.alerts.rules.map(\.forks) == [true, false])
        #expect(configuration.widgets.map(\.forks) == [true, false])
        func problem(_ json: String) -> ConfigurationError? {
            do throws(ConfigurationError) {
                _ = try BridgeConfiguration(json: Data(json.utf8))
                return nil
            } catch {
                return error
            }
        }
        let notBool = problem(
            #"{"github": {"webhook_secrets": ["s"]}, "alerts": {"rules": [{"forks": "yes"}]}}"#)
        #expect(notBool?.key == "alerts.rules[0].forks")
        let onAction = problem(
            #"""
            {"github": {"webhook_secrets": ["s"], "api": {"token": "ghp_x"}},
             "actions": {"public_url": "https://hooks.example.com", "rules": [{"offer": ["cancel"], "forks": true}]}}
            """#)
        #expect(onAction?.key == "actions.rules[0].forks")
        #expect(onAction?.problem.contains("never gets a button") == true)
    }

    // MARK: The issue's scenario in the engine

    static let waves: [[RunScript.Job]] = [[RunScript.Job("deploy", duration: 20)]]
    static let failing: [[RunScript.Job]] = [[RunScript.Job("deploy", duration: 20, conclusion: "failure")]]

    /// An engine with every button offered for "Deploy*" on main, alerts on failures and fixes on
    /// main, and a widget on main.
    static func engine(
        alertRules: [AlertRule] = [AlertRule(when: [.failure, .fixed], branches: [GlobPattern("main")])]
    )
        -> BridgeEngine
    {
        AlertTests.engine(
            alertRules,
            actions: ActionSettings(
                publicURL: "https://hooks.example.com",
                rules: [
                    ActionRule(
                        offer: [.cancel, .approve, .rerun], workflows: [GlobPattern("Deploy*")],
                        branches: [GlobPattern("main")], approvers: ["mona"])
                ]),
            widgets: [WidgetSettings(slug: "ci-main", name: "CI on main", branches: [GlobPattern("main")])])
    }

    /// The fork run's deliveries: recorded-shape run bodies, jobs from the script, one waiting.
    static func forkDeliveries(_ payload: ForkRunPayload, conclusion: String?) throws -> [WebhookEvent] {
        let jobs = payload.jobs
        var events = [
            try payload.event("requested"), try payload.event("in_progress", at: 1),
            jobs.job(payload.runID * 100, "deploy", "queued", createdAt: 2),
            jobs.job(payload.runID * 100, "deploy", "waiting", createdAt: 2, environment: "production"),
        ]
        if let conclusion {
            events += [
                jobs.job(
                    payload.runID * 100, "deploy", "completed", createdAt: 2, startedAt: 3, completedAt: 30,
                    conclusion: conclusion),
                try payload.event("completed", at: 31, conclusion: conclusion),
            ]
        }
        return events
    }

    @Test("a signed pull_request from mallory/rocket on main, Deploy prod, waiting: no buttons, no widget, no review")
    func waitingForkRun() throws {
        for event in ["pull_request", "pull_request_target"] {
            var engine = Self.engine(alertRules: [AlertRule(when: [.waiting], forks: true)])
            var payload = ForkRunPayload(runID: 1)
            payload.event = event
            var history = RunHistory()
            let alerts = AlertTests.play(
                try Self.forkDeliveries(payload, conclusion: nil), on: &engine, history: &history)
            let state = try #require(engine.runs[Self.key])
            #expect(engine.offers(for: state).isEmpty, "\(event)")
            #expect(
                engine.actionProblem(.approve, on: Self.key, environment: "production", newerAttemptStored: false)
                    != nil)
            #expect(engine.actionProblem(.cancel, on: Self.key, environment: nil, newerAttemptStored: false) != nil)
            let card = ActionTests.card(engine)
            #expect(card["secondary_url_action"]?["url"]?.stringValue?.contains("/actions/") != true, "no Cancel")
            #expect(card["subtitle"]?.stringValue?.contains("from mallory/rocket") == true)
            // The waiting alert its forks: true rule asks for says whose run it is, without buttons.
            let waiting = try #require(alerts.first { $0.reason == .waiting })
            #expect(waiting.body["actions"] == nil)
            #expect(waiting.body["body"]?.stringValue?.contains("on main from mallory/rocket") == true)
            #expect(engine.widgets["ci-main"]?.run == nil, "the widget on main does not follow a fork's run")
            #expect(engine.takeChanges().widgets.isEmpty)
        }
    }

    @Test("a real main failure, then a same-named fork success: no fixed, no shared collapse_id; the reverse too")
    func noFixedFromAFork() throws {
        var engine = Self.engine(alertRules: [
            AlertRule(when: [.failure, .fixed], branches: [GlobPattern("main")], forks: true)
        ])
        var history = RunHistory()
        var real = RunScript(runID: 1, workflow: "Deploy prod", start: 1_700_000_000)
        real.event = "push"
        var alerts = AlertTests.play(real.deliveries(waves: Self.failing), on: &engine, history: &history)
        let failure = try #require(alerts.first { $0.reason == .failure })
        #expect(alerts.count == 1)
        let fork = ForkRunPayload(runID: 2, start: 1_700_000_500)
        alerts = AlertTests.play(try Self.forkDeliveries(fork, conclusion: "success"), on: &engine, history: &history)
        #expect(!alerts.contains { $0.reason == .fixed }, "a fork's success fixes nothing on the repository's main")
        // A fork's failure (its rule says forks: true) alerts under a key of its own.
        let forkFailure = ForkRunPayload(runID: 3, start: 1_700_001_000)
        alerts = AlertTests.play(
            try Self.forkDeliveries(forkFailure, conclusion: "failure"), on: &engine, history: &history)
        let forkAlert = try #require(alerts.first { $0.reason == .failure })
        #expect(forkAlert.body["collapse_id"] != failure.body["collapse_id"])
        #expect(forkAlert.body["body"]?.stringValue?.contains("on main from mallory/rocket") == true)
        // The repository's own success still fixes its own failure, not answering the fork's.
        var fixed = RunScript(runID: 4, workflow: "Deploy prod", start: 1_700_001_500)
        fixed.event = "push"
        alerts = AlertTests.play(fixed.deliveries(waves: Self.waves), on: &engine, history: &history)
        let fix = try #require(alerts.first { $0.reason == .fixed })
        #expect(fix.body["collapse_id"] == failure.body["collapse_id"])
        // And a fork's success after the fork's own failure fixes only the fork's.
        let forkFix = ForkRunPayload(runID: 5, start: 1_700_002_000)
        alerts = AlertTests.play(
            try Self.forkDeliveries(forkFix, conclusion: "success"), on: &engine, history: &history)
        let forkFixed = try #require(alerts.first { $0.reason == .fixed })
        #expect(forkFixed.body["collapse_id"] == forkAlert.body["collapse_id"])
        #expect(forkFixed.body["collapse_id"] != failure.body["collapse_id"])
    }

    @Test("without forks: true a fork's failure on main does not alert; a base failure after it is not 'fixed' by it")
    func forkFailureWithoutOptIn() throws {
        var engine = Self.engine()
        var history = RunHistory()
        let fork = ForkRunPayload(runID: 1, start: 1_700_000_000)
        #expect(
            AlertTests.play(try Self.forkDeliveries(fork, conclusion: "failure"), on: &engine, history: &history)
                .isEmpty)
        var real = RunScript(runID: 2, workflow: "Deploy prod", start: 1_700_000_500)
        real.event = "push"
        let alerts = AlertTests.play(real.deliveries(waves: Self.waves), on: &engine, history: &history)
        #expect(alerts.isEmpty, "the fork's failure is not main's: main's success fixes nothing")
    }

    @Test("a run known only from its jobs: no button, no widget, no fixed, a collapse_id of its own")
    func unknownOrigin() throws {
        var engine = Self.engine(alertRules: [AlertRule(when: [.failure, .fixed])])
        var history = RunHistory()
        var real = RunScript(runID: 1, workflow: "Deploy prod", start: 1_700_000_000)
        real.event = "push"
        let failure = try #require(
            AlertTests.play(real.deliveries(waves: Self.failing), on: &engine, history: &history).first)
        // Jobs only (no workflow_run delivery), then a failure and a success, each inferred
        // finished after the grace period.
        for (runID, conclusion) in [(2, "failure"), (3, "success")] {
            let jobs = ForkRunPayload(runID: runID, start: 1_700_000_000 + Double(runID) * 500).jobs
            let id = runID * 100
            let events = [
                jobs.job(id, "deploy", "queued", createdAt: 2),
                jobs.job(id, "deploy", "in_progress", createdAt: 2, startedAt: 3),
            ]
            _ = AlertTests.play(events, on: &engine, history: &history)
            let key = RunKey(repository: "acme/widgets", runID: runID, attempt: 1)
            let state = try #require(engine.runs[key])
            #expect(state.origin == .unknown)
            #expect(engine.offers(for: state).isEmpty)
            #expect(engine.actionProblem(.cancel, on: key, environment: nil, newerAttemptStored: false) != nil)
            // What the card wants to show for this run (the reused activity may still show the
            // last run's end frame until the first frame's throttle window passes).
            let slug = try #require(engine.sessions.first { $0.value.owner == key }?.key)
            let wanted = engine.desired(slug: slug, at: state.lastChangeAt)?.content ?? [:]
            #expect(wanted["secondary_url_action"]?["url"]?.stringValue?.contains("/actions/") != true)
            _ = AlertTests.play(
                [
                    jobs.job(
                        id, "deploy", "completed", createdAt: 2, startedAt: 3, completedAt: 30, conclusion: conclusion)
                ], on: &engine, history: &history)
            engine.advance(to: 1_700_000_000 + Double(runID) * 500 + 86_400)
            engine.planAlerts(history: history)
            let changes = engine.takeChanges()
            for summary in changes.history.values { history.record(summary) }
            #expect(engine.runs[key]?.completion?.conclusion == conclusion)
            #expect(changes.widgets.isEmpty, "the widget on main waits for the run's origin")
            if conclusion == "failure" {
                let alert = try #require(changes.alerts.first)
                #expect(alert.reason == .failure, "shown as usual")
                #expect(alert.body["collapse_id"] != failure.body["collapse_id"], "replacing nothing of main's")
            } else {
                #expect(changes.alerts.isEmpty, "no fixed while it may be a fork's")
            }
        }
    }

    // MARK: Hostile names

    @Test(
        "a fork name with bidi overrides, ZWJ, NUL and a thousand characters is shown plain and clamped",
        arguments: [
            "mallory/rock\u{202E}tekcor\u{202C}et", "mal\u{0}lory/rocket\n\u{2028}x", "👩‍🚀/rocket\u{200D}",
            "m/" + String(repeating: "r", count: 1_000), "mallory/" + String(repeating: "👩‍👩‍👧‍👦", count: 300),
        ])
    func hostileForkName(_ name: String) throws {
        var engine = Self.engine(alertRules: [AlertRule(when: [.failure], forks: true)])
        var payload = ForkRunPayload(runID: 1)
        payload.fork = name
        var history = RunHistory()
        let alerts = AlertTests.play(
            try Self.forkDeliveries(payload, conclusion: "failure"), on: &engine, history: &history)
        let state = try #require(engine.runs[Self.key])
        #expect(state.origin == .fork(headRepository: name))
        let from = try #require(state.origin.fromText)
        #expect(from.unicodeScalars.count <= RunOrigin.nameLimit + 5)
        for scalar in from.unicodeScalars {
            #expect(!(0x202A...0x202E).contains(scalar.value) && !(0x2066...0x2069).contains(scalar.value))
            #expect(scalar.value >= 0x20 && scalar.value != 0x2028, "no control character")
        }
        let subtitle = try #require(ActionTests.card(engine)["subtitle"]?.stringValue)
        #expect(subtitle.contains(from))
        #expect(subtitle.count <= 256)
        let alert = try #require(alerts.first { $0.reason == .failure })
        #expect(alert.body["body"]?.stringValue?.contains(from) == true)
        #expect(NotificationContract.violations(alert.body).isEmpty)
    }
}

extension ForkTests {
    @Test("a job that waits before its run is known: the review is asked once the run says it is the repository's own")
    func reviewWaitsForTheOrigin() throws {
        var engine = Self.engine()
        var script = RunScript(runID: 1, workflow: "Deploy prod")
        script.event = "push"
        let early = AlertTests.play(
            [
                script.job(100, "deploy", "queued", createdAt: 1),
                script.job(100, "deploy", "waiting", createdAt: 1, environment: "production"),
            ], on: &engine)
        #expect(early.isEmpty, "no question before the run's origin is known")
        let later = AlertTests.play([script.run("requested", at: 0)], on: &engine)
        let review = try #require(later.first)
        #expect(later.map(\.reason) == [.waiting])
        #expect(review.body["actions"]?.arrayValue?.map { $0["id"] } == ["approve", "reject"])
        let state = try #require(engine.runs[RunKey(repository: "acme/widgets", runID: 1, attempt: 1)])
        #expect(engine.offers(for: state) == [.cancel, .approve, .reject, .rerun])

        // The same order for a fork's run: nothing, before or after.
        var fork = Self.engine()
        let jobs = ForkRunPayload(runID: 2).jobs
        var alerts = AlertTests.play(
            [
                jobs.job(200, "deploy", "queued", createdAt: 1),
                jobs.job(200, "deploy", "waiting", createdAt: 1, environment: "production"),
            ], on: &fork)
        alerts += AlertTests.play([try ForkRunPayload(runID: 2).event("requested")], on: &fork)
        #expect(alerts.isEmpty)
    }
}
