import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

@Suite("WebhookDecoder")
struct WebhookDecoderTests {
    // MARK: Real workflow_job deliveries

    @Test func queuedJobOfReRunAttempt10() throws {
        let event = try job("workflow_job.queued.attempt10-pre-commit.json")
        #expect(event.action == "queued")
        #expect(
            event.repository
                == Repository(
                    fullName: "foo/webhook-testing", htmlURL: "https://github.com/foo/webhook-testing",
                    defaultBranch: "main"))
        #expect(event.deploymentEnvironment == nil)
        let job = event.job
        #expect(job.id == 17_556_730_984)
        #expect(job.runID == 6_454_805_877)
        #expect(job.runAttempt == 10)
        #expect(job.name == "pre-commit")
        #expect(job.workflowName == "Tests")
        #expect(job.headBranch == "main")
        #expect(job.headSHA == "4d6ee57193c29fc3b23723c386f462287b60bf87")
        #expect(job.status == .queued)
        #expect(job.conclusion == nil)
        #expect(job.createdAt == 1_697_191_887)
        #expect(job.startedAt == job.createdAt)
        #expect(job.completedAt == nil)
        #expect(job.steps.isEmpty)
        #expect(job.labels == ["ubuntu-latest"])
        #expect(job.runnerName == nil)
        #expect(job.htmlURL == "https://github.com/foo/webhook-testing/actions/runs/6454805877/job/17556730984")
    }

    @Test func completedJobKeepsStepsInPayloadOrderWithGaps() throws {
        let job = try job("workflow_job.completed.attempt10-pre-commit.json").job
        #expect(job.id == 17_556_730_984)
        #expect(job.status == .completed)
        #expect(job.conclusion == "success")
        #expect(job.startedAt == 1_697_191_894)
        #expect(job.completedAt == 1_697_191_904)
        #expect(job.runnerName == "GitHub Actions 2")
        #expect(job.steps.map(\.number) == [1, 2, 3, 4, 5, 8, 9, 10, 11])
        #expect(job.steps.allSatisfy { $0.status == .completed && $0.conclusion == "success" })
        #expect(
            job.steps.first
                == JobStep(
                    number: 1, name: "Set up job", status: .completed, conclusion: "success",
                    startedAt: 1_697_191_893, completedAt: 1_697_191_895
                )
        )
        #expect(job.steps.last?.name == "Complete job")
    }

    @Test func completedJobWithSkippedStepAndCompleteJobNotLast() throws {
        let job = try job("workflow_job.completed.attempt10-test.json").job
        #expect(job.id == 17_556_741_424)
        #expect(job.name == "test")
        #expect(job.steps.count == 12)
        #expect(job.steps.map(\.number).suffix(2) == [16, 17])
        #expect(job.steps[10].name == "Complete job")
        #expect(job.steps[11].name == "Post Run actions/cache@v3")
        let skipped = try #require(job.steps.first { $0.conclusion == "skipped" })
        #expect(skipped.number == 7)
        #expect(skipped.name == "Run pip install pyparsing==2.4.7")
        #expect(skipped.status == .completed)
    }

    @Test func matrixJobOfAttempt13() throws {
        let event = try job("workflow_job.completed.matrix-attempt13.json")
        #expect(event.job.id == 40_685_651_258)
        #expect(event.job.runID == 14_460_881_260)
        #expect(event.job.runAttempt == 13)
        #expect(event.job.name == "test (1.23)")
        #expect(event.job.workflowName == "build-and-test")
        #expect(event.job.headBranch == "renovate/major-tool-deps")
        #expect(event.job.runnerName == "GitHub Actions 320")
        #expect(event.repository.fullName == "open-telemetry/open-telemetry-otel-collector")
    }

    @Test func reusableWorkflowJobNameKeepsCallerAndCallee() throws {
        let event = try job("workflow_job.completed.reusable-caller-callee-matrix.json")
        #expect(event.action == "completed")
        #expect(event.job.id == 35_483_677_182)
        #expect(event.job.runID == 12_730_579_163)
        #expect(event.job.runAttempt == 1)
        #expect(event.job.name == "call-workflow-passing-data / test (1.23)")
        #expect(event.job.workflowName == "Build and Test")
        #expect(event.job.steps.map(\.number) == [1, 2, 3, 4, 5, 9, 10, 11])
        #expect(event.repository.fullName == "liatrio/golang-demo-app")
        #expect(event.repository.name == "golang-demo-app")
    }

    @Test func skippedJobHasNoStepsLabelsOrRunner() throws {
        let job = try job("workflow_job.completed.skipped-attempt13.json").job
        #expect(job.id == 41_546_348_818)
        #expect(job.runAttempt == 13)
        #expect(job.name == "build")
        #expect(job.status == .completed)
        #expect(job.conclusion == "skipped")
        #expect(job.steps.isEmpty)
        #expect(job.labels.isEmpty)
        #expect(job.runnerName == nil)
        // Recorded as is: GitHub stamps a skipped job's start before its creation.
        #expect(job.createdAt == 1_746_195_355)
        #expect(job.startedAt == 1_746_195_354)
        #expect(job.completedAt == 1_746_195_354)
    }

    @Test func queuedJobOfThirdAttempt() throws {
        let event = try job("workflow_job.queued.attempt3.json")
        #expect(event.job.id == 32_611_702_112)
        #expect(event.job.runID == 11_708_636_007)
        #expect(event.job.runAttempt == 3)
        #expect(event.job.name == "alert-15min")
        #expect(event.repository.fullName == "clee2000/random-testing")
    }

    @Test func legacyJobsDefaultMissingFields() throws {
        let arc = try job("workflow_job.queued.legacy-arc-minimal.json")
        #expect(arc.job.id == 1_234_567_890)
        #expect(arc.job.runAttempt == 1)
        #expect(arc.job.workflowName == nil)
        #expect(arc.job.headBranch == nil)
        #expect(arc.job.createdAt == nil)
        #expect(arc.job.startedAt == 1_632_872_729)
        #expect(arc.job.runnerName == nil)
        #expect(arc.job.labels == ["label1"])
        #expect(arc.job.status == .queued)
        #expect(
            arc.repository
                == Repository(
                    fullName: "MYORG/MYREPO", htmlURL: "https://github.com/MYORG/MYREPO", defaultBranch: "master"))

        let terraform = try job("workflow_job.queued.legacy-tf-aws-runner.json")
        #expect(terraform.job.id == 3_169_272_040)
        #expect(terraform.job.runID == 1_068_820_843)
        #expect(terraform.job.runAttempt == 1)
        #expect(terraform.job.workflowName == nil)
        #expect(terraform.job.labels == ["self-hosted"])
        #expect(terraform.repository.fullName == "github-aws-runners/terraform-aws-github-runner")
    }

    // MARK: octokit workflow_job examples

    @Test func waitingJobCarriesItsDeploymentEnvironment() throws {
        let queued = try job("workflow_job.queued.with-deployment.json")
        #expect(queued.action == "queued")
        #expect(queued.job.status == .waiting)
        #expect(queued.deploymentEnvironment == "Test")
        #expect(queued.job.labels == ["self-hosted", "k8s"])
        #expect(queued.job.runnerName == nil)

        // The recorded `waiting` delivery itself has no `deployment` object.
        let waiting = try job("workflow_job.waiting.json")
        #expect(waiting.action == "waiting")
        #expect(waiting.job.status == .waiting)
        #expect(waiting.job.id == 12_877_621_891)
        #expect(waiting.deploymentEnvironment == nil)
    }

    @Test func inProgressJobWithQueuedSteps() throws {
        let job = try job("workflow_job.in_progress.with-queued-steps.json").job
        #expect(job.status == .inProgress)
        #expect(job.steps.map(\.status) == [.completed, .completed, .inProgress] + Array(repeating: .queued, count: 6))
        #expect(job.steps[3].startedAt == nil)
        #expect(job.steps[2].completedAt == nil)
        #expect(job.steps[2].startedAt != nil)
    }

    @Test func failedJobKeepsStepConclusions() throws {
        let job = try job("workflow_job.completed.failure.with-organization.json").job
        #expect(job.conclusion == "failure")
        #expect(job.steps.first { $0.conclusion == "failure" }?.number == 8)
        #expect(job.steps.filter { $0.conclusion == "skipped" }.map(\.number) == [14, 15])
    }

    // MARK: workflow_run

    @Test func completedRunOfAttempt10() throws {
        let event = try run("workflow_run.completed.attempt10.json")
        #expect(event.action == "completed")
        #expect(
            event.repository
                == Repository(
                    fullName: "foo/webhook-testing", htmlURL: "https://github.com/foo/webhook-testing",
                    defaultBranch: "main"))
        let expected = WorkflowRun(
            id: 6_454_805_877, runAttempt: 10, runNumber: 14, workflowID: 71_922_243, name: "Tests",
            displayTitle: "fix: updating readme", path: ".github/workflows/tests.yml", headBranch: "main",
            headSHA: "4d6ee57193c29fc3b23723c386f462287b60bf87", event: "push", status: .completed,
            conclusion: "success", htmlURL: "https://github.com/foo/webhook-testing/actions/runs/6454805877",
            runStartedAt: 1_697_191_885, createdAt: 1_697_189_443, updatedAt: 1_697_191_930, pullRequests: [],
            actor: "foo", triggeringActor: "foo", commitTitle: "fix: updating readme",
            headRepository: "foo/webhook-testing", headRepositoryID: 701_962_619
        )
        #expect(event.run == expected)
    }

    @Test("what an alert names: actor, triggering actor, the commit's title, the default branch, the failed step")
    func alertFields() throws {
        let failed = try run("workflow_run.completed.failure.json")
        #expect(failed.run.actor == "clee2000")
        #expect(failed.run.triggeringActor == "clee2000")
        #expect(failed.run.commitTitle == "Update thing.xml")
        #expect(failed.repository.defaultBranch == "master")

        let job = try job("workflow_job.completed.failure.with-organization.json")
        #expect(JobRecord(job).failedStep == "Run yarn run format-check")
        #expect(JobRecord(try self.job("workflow_job.completed.attempt10-test.json")).failedStep == nil)

        // Only the first line is the title, whatever the line break and the script in it.
        let body = Data(
            #"{"action":"completed","repository":{"full_name":"o/r","default_branch":"trunk"},"workflow_run":{"id":1,"status":"completed","head_commit":{"message":"Fix ‮evil\r\n\nSigned-off-by: x"},"actor":{"login":"a"},"triggering_actor":null}}"#
                .utf8)
        guard
            case .workflowRun(let event) = try WebhookDecoder.decode(
                event: "workflow_run", body: body, contentType: "application/json")
        else { throw TestFailure("not a workflow_run") }
        #expect(event.run.commitTitle == "Fix \u{202E}evil")
        #expect(event.run.triggeringActor == nil)
        #expect(event.repository.defaultBranch == "trunk")
    }

    @Test func failedRunOfAttempt13WithoutPullRequestsField() throws {
        let run = try run("workflow_run.completed.failure-attempt13.json").run
        #expect(run.id == 14_460_881_260)
        #expect(run.runAttempt == 13)
        #expect(run.event == "pull_request")
        #expect(run.conclusion == "failure")
        #expect(run.runStartedAt == 1_744_837_733)
        #expect(run.pullRequests.isEmpty)
    }

    @Test func dynamicCodeQLRun() throws {
        let event = try run("workflow_run.in_progress.dynamic-codeql.body.json")
        #expect(event.action == "in_progress")
        #expect(event.run.id == 18_436_407_157)
        #expect(event.run.status == .inProgress)
        #expect(event.run.conclusion == nil)
        #expect(event.run.event == "dynamic")
        #expect(event.run.path == "dynamic/github-code-scanning/codeql")
        #expect(event.run.headBranch == "refs/pull/166/head")
        #expect(event.run.name == "PR #166")
        #expect(event.run.runStartedAt == 1_760_227_492)
        #expect(event.repository.fullName == "derekg1729/test-repo")
    }

    /// The recorded delivery with its headers: the decoder gets exactly what the server would.
    @Test func capturedDeliveryDecodesWithItsOwnHeaders() throws {
        let capture = try #require(
            JSONSerialization.jsonObject(with: Fixtures.data("workflow_run.in_progress.dynamic-codeql.capture.json"))
                as? [String: Any]
        )
        let headers = try #require(capture["headers"] as? [String: String])
        let base64 = try #require(capture["body_raw_base64"] as? String)
        let body = try #require(Data(base64Encoded: base64))
        #expect(body == (try Fixtures.data("workflow_run.in_progress.dynamic-codeql.body.json")))
        let event = try WebhookDecoder.decode(
            event: try #require(headers["x-github-event"]), body: body, contentType: headers["content-type"]
        )
        #expect(event == (try decodeFixture("workflow_run.in_progress.dynamic-codeql.body.json")))
    }

    @Test func runAwaitingApprovalIsRequestedButCompleted() throws {
        let event = try run("workflow_run.requested.with-conclusion.json")
        #expect(event.action == "requested")
        #expect(event.run.status == .completed)
        #expect(event.run.conclusion == "action_required")
    }

    /// This payload's `workflow_run.name` is `""`; the top-level `workflow` object names it.
    @Test func requestedRunIsQueuedAndAnEmptyNameTakesTheWorkflowsName() throws {
        let event = try run("workflow_run.requested.json")
        #expect(event.action == "requested")
        #expect(event.run.status == .queued)
        #expect(event.run.name == "test")
        #expect(event.run.displayTitle == "ci(action): update actions/setup-node digest to 8c91899")
    }

    @Test func pullRequestURLIsBuiltFromTheRepository() throws {
        let event = try run("workflow_run.completed.with-pull-requests.json")
        #expect(
            event.run.pullRequests == [
                PullRequestReference(number: 2, htmlURL: "https://github.com/octo-org/octo-repo/pull/2")
            ])
    }

    // MARK: ping and other events

    @Test func pingFromARepositoryHook() throws {
        let ping = try #require(pingEvent(try decodeFixture("ping.json")))
        #expect(ping.zen == "Anything added dilutes everything else.")
        #expect(ping.hookID == 109_948_940)
        #expect(ping.events == ["*"])
        #expect(ping.contentType == "json")
        #expect(ping.repository?.fullName == "Octocoders/Hello-World")
    }

    @Test func pingFromAnOrganizationHookHasNoRepository() throws {
        let ping = try #require(pingEvent(try decodeFixture("ping.with-organization.json")))
        #expect(ping.repository == nil)
        #expect(ping.events.count == 14)
        #expect(ping.events.first == "code_scanning_alert")
        #expect(!ping.events.contains("workflow_job"))
        #expect(ping.hookID == 109_948_940)
    }

    @Test func minimalPingDefaultsEverything() throws {
        let event = try WebhookDecoder.decode(
            event: "ping", body: Data(#"{"zen":"Hi","hook":{"id":7}}"#.utf8), contentType: nil)
        #expect(event == .ping(PingEvent(zen: "Hi", hookID: 7, events: [], contentType: nil, repository: nil)))
    }

    @Test(arguments: [
        "check_run.completed.json", "check_run.created.json", "check_suite.completed.json",
        "check_suite.requested.json",
    ])
    func otherEventsAreUnsupportedNotErrors(name: String) throws {
        let event = eventName(of: name)
        #expect(try decodeFixture(name) == .unsupported(event: event))
    }

    @Test func unsupportedEventsAreNotParsed() throws {
        let event = try WebhookDecoder.decode(event: "push", body: Data("not json".utf8), contentType: "text/plain")
        #expect(event == .unsupported(event: "push"))
        #expect(
            try WebhookDecoder.decode(event: "check_run", body: Data(), contentType: nil)
                == .unsupported(event: "check_run"))
    }

    /// Each recorded body decodes into the case its event names.
    @Test(arguments: [
        "ping.json", "ping.with-app_id.json", "ping.with-organization.json",
        "workflow_job.completed.attempt10-pre-commit.json", "workflow_job.completed.attempt10-test.json",
        "workflow_job.completed.failure.with-organization.json", "workflow_job.completed.matrix-attempt13.json",
        "workflow_job.completed.reusable-caller-callee-matrix.json", "workflow_job.completed.skipped-attempt13.json",
        "workflow_job.completed.success.with-organization.json", "workflow_job.in_progress.json",
        "workflow_job.in_progress.with-queued-steps.json", "workflow_job.queued.attempt10-pre-commit.json",
        "workflow_job.queued.attempt10-test.json", "workflow_job.queued.attempt3.json",
        "workflow_job.queued.json", "workflow_job.queued.legacy-arc-minimal.json",
        "workflow_job.queued.legacy-tf-aws-runner.json", "workflow_job.queued.with-deployment.json",
        "workflow_job.waiting.json", "workflow_run.completed.attempt10.json",
        "workflow_run.completed.failure-attempt13.json", "workflow_run.completed.failure.json",
        "workflow_run.completed.json", "workflow_run.completed.with-pull-requests.json",
        "workflow_run.in_progress.dynamic-codeql.body.json", "workflow_run.in_progress.json",
        "workflow_run.requested.json", "workflow_run.requested.with-conclusion.json",
    ])
    func everyRecordedDeliveryDecodes(name: String) throws {
        let decoded = try decodeFixture(name)
        let action =
            try #require(
                JSONSerialization.jsonObject(with: Fixtures.data(name)) as? [String: Any]
            )["action"] as? String
        switch (eventName(of: name), decoded) {
        case ("workflow_job", .workflowJob(let event)):
            #expect(event.action == action)
            #expect(event.job.id > 0 && event.job.runID > 0 && !event.job.name.isEmpty)
        case ("workflow_run", .workflowRun(let event)):
            #expect(event.action == action)
            #expect(event.run.id > 0 && event.run.createdAt != nil)
        case ("ping", .ping(let ping)):
            #expect(ping.hookID != nil && !ping.events.isEmpty)
        default:
            Issue.record("\(name) decoded as \(decoded)")
        }
    }

    // MARK: Content types

    /// GitHub's "application/x-www-form-urlencoded" hooks put the same JSON in the `payload` field.
    @Test(arguments: [
        "workflow_job.completed.reusable-caller-callee-matrix.json",
        "workflow_run.in_progress.dynamic-codeql.body.json",
        "ping.json",
    ])
    func formEncodedBodyDecodesLikeJSON(name: String) throws {
        let json = try Fixtures.data(name)
        let expected = try decodeFixture(name)
        let form = GitHubForm.encoded(json)
        #expect(form.count > json.count)
        let event = eventName(of: name)
        #expect(
            try WebhookDecoder.decode(event: event, body: form, contentType: "application/x-www-form-urlencoded")
                == expected)
        #expect(try WebhookDecoder.decode(event: event, body: form, contentType: nil) == expected)
    }

    @Test func formDecodingHandlesPlusPercentAndOtherFields() throws {
        let json = try editedJob("workflow_job.completed.attempt10-test.json") {
            $0["name"] = "build + test (a, b) 100%"
        }
        let body =
            Data("other=1&payload=".utf8) + GitHubForm.encoded(json).dropFirst("payload=".count) + Data("&x=y".utf8)
        let job = try #require(jobEvent(try WebhookDecoder.decode(event: "workflow_job", body: body, contentType: nil)))
        #expect(job.job.name == "build + test (a, b) 100%")

        let lowercaseHex = Data(#"payload=%7b%22zen%22%3a%22a+b%22%7d"#.utf8)
        let ping = try WebhookDecoder.decode(
            event: "ping", body: lowercaseHex, contentType: "application/x-www-form-urlencoded; charset=utf-8"
        )
        #expect(ping == .ping(PingEvent(zen: "a b", hookID: nil, events: [], contentType: nil, repository: nil)))
    }

    @Test(arguments: ["application/json", "application/json; charset=utf-8", "Application/JSON ;charset=UTF-8", nil])
    func jsonContentTypeVariants(contentType: String?) throws {
        let body = try Fixtures.data("workflow_job.queued.attempt3.json")
        let event = try WebhookDecoder.decode(event: "workflow_job", body: body, contentType: contentType)
        #expect(jobEvent(event)?.job.id == 32_611_702_112)
    }

    @Test(arguments: ["text/plain", "application/xml", "multipart/form-data; boundary=x", ""])
    func otherContentTypesAreRejected(contentType: String) throws {
        let body = try Fixtures.data("workflow_job.queued.attempt3.json")
        #expect(throws: WebhookDecodingError.unsupportedContentType(contentType)) {
            try WebhookDecoder.decode(event: "workflow_job", body: body, contentType: contentType)
        }
    }

    // MARK: Tolerance

    @Test func missingOrNullOptionalFieldsDefault() throws {
        let json = try editedJob("workflow_job.completed.attempt10-test.json") { job in
            job["run_attempt"] = nil
            job["steps"] = NSNull()
            job["labels"] = nil
            job["workflow_name"] = NSNull()
            job["completed_at"] = NSNull()
            job["unexpected_new_field"] = ["nested": [1, 2, 3]]
        }
        let job = try #require(jobEvent(try WebhookDecoder.decode(event: "workflow_job", body: json, contentType: nil)))
            .job
        #expect(job.runAttempt == 1)
        #expect(job.steps.isEmpty)
        #expect(job.labels.isEmpty)
        #expect(job.workflowName == nil)
        #expect(job.completedAt == nil)

        let run = try edited("workflow_run.completed.attempt10.json") { payload in
            var run = payload["workflow_run"] as? [String: Any] ?? [:]
            run["run_attempt"] = nil
            run["pull_requests"] = NSNull()
            run["status"] = nil
            payload["workflow_run"] = run
        }
        let decoded = try #require(
            runEvent(try WebhookDecoder.decode(event: "workflow_run", body: run, contentType: nil)))
        #expect(decoded.run.runAttempt == 1)
        #expect(decoded.run.pullRequests.isEmpty)
        #expect(decoded.run.status == .queued)
    }

    @Test func unknownStatusesRankAsQueued() throws {
        let json = try editedJob("workflow_job.in_progress.with-queued-steps.json") { job in
            job["status"] = "pending"
            var steps = job["steps"] as? [[String: Any]] ?? []
            steps[0]["status"] = "sleeping"
            steps[1]["status"] = nil
            job["steps"] = steps
        }
        let job = try #require(jobEvent(try WebhookDecoder.decode(event: "workflow_job", body: json, contentType: nil)))
            .job
        #expect(job.status == .queued)
        #expect(job.steps[0].status == .queued)
        #expect(job.steps[1].status == .queued)
        #expect(job.steps[2].status == .inProgress)

        #expect(WebhookDecoder.jobStatus("in_progress") == .inProgress)
        #expect(WebhookDecoder.jobStatus("something_new") == .queued)
        #expect(WebhookDecoder.runStatus("something_new") == .queued)
        #expect(WebhookDecoder.runStatus("requested") == .requested)
        #expect(WebhookDecoder.runStatus("waiting") == .waiting)
        #expect(WebhookDecoder.runStatus("pending") == .pending)
        #expect(WebhookDecoder.runStatus(nil) == .queued)
        #expect(WebhookDecoder.jobStatus("requested") == .queued)
    }

    @Test func jobWithoutRepositoryTakesItFromItsURLs() throws {
        let fromHTML = try editedJob("workflow_job.completed.attempt10-test.json", removingRepository: true) { _ in }
        let htmlEvent = try #require(
            jobEvent(try WebhookDecoder.decode(event: "workflow_job", body: fromHTML, contentType: nil)))
        #expect(
            htmlEvent.repository
                == Repository(fullName: "foo/webhook-testing", htmlURL: "https://github.com/foo/webhook-testing"))

        let fromAPI = try editedJob("workflow_job.completed.attempt10-test.json", removingRepository: true) { job in
            job["html_url"] = nil
        }
        let apiEvent = try #require(
            jobEvent(try WebhookDecoder.decode(event: "workflow_job", body: fromAPI, contentType: nil)))
        #expect(
            apiEvent.repository
                == Repository(fullName: "foo/webhook-testing", htmlURL: "https://github.com/foo/webhook-testing"))

        let neither = try editedJob("workflow_job.completed.attempt10-test.json", removingRepository: true) { job in
            job["html_url"] = nil
            job["run_url"] = "not a url"
        }
        #expect(throws: WebhookDecodingError.missingField("repository.full_name")) {
            try WebhookDecoder.decode(event: "workflow_job", body: neither, contentType: nil)
        }
    }

    @Test func repositoryFromEnterpriseServerURLs() {
        let web = WebhookDecoder.repository(
            webURL: "https://ghe.example.com/team/app/actions/runs/1/job/2", apiURL: nil)
        #expect(web == Repository(fullName: "team/app", htmlURL: "https://ghe.example.com/team/app"))
        let api = WebhookDecoder.repository(
            webURL: nil, apiURL: "https://ghe.example.com/api/v3/repos/team/app/actions/runs/1")
        #expect(api == Repository(fullName: "team/app", htmlURL: "https://ghe.example.com/team/app"))
        #expect(WebhookDecoder.repository(webURL: "https://github.com/only-owner", apiURL: nil) == nil)
    }

    @Test func runWithoutTopLevelRepositoryUsesTheNestedOne() throws {
        let json = try edited("workflow_run.completed.attempt10.json") { $0["repository"] = nil }
        let event = try #require(
            runEvent(try WebhookDecoder.decode(event: "workflow_run", body: json, contentType: nil)))
        #expect(event.repository.fullName == "foo/webhook-testing")
    }

    // MARK: Malformed input

    @Test func emptyBodies() {
        #expect(throws: WebhookDecodingError.emptyBody) {
            try WebhookDecoder.decode(event: "workflow_job", body: Data(), contentType: "application/json")
        }
        #expect(throws: WebhookDecodingError.emptyBody) {
            try WebhookDecoder.decode(event: "workflow_run", body: Data(" \r\n\t".utf8), contentType: nil)
        }
        #expect(throws: WebhookDecodingError.emptyBody) {
            try WebhookDecoder.decode(
                event: "workflow_run", body: Data("payload=".utf8), contentType: "application/x-www-form-urlencoded"
            )
        }
    }

    @Test func bodiesThatAreNotJSON() throws {
        for body in ["not json", "{\"action\": \"queued\", \"workflow_job\": {", "[1, 2"] {
            let error = #expect(throws: WebhookDecodingError.self) {
                try WebhookDecoder.decode(event: "workflow_job", body: Data(body.utf8), contentType: "application/json")
            }
            guard case .invalidJSON(let detail) = error else {
                Issue.record("\(body): \(String(describing: error))")
                continue
            }
            #expect(!detail.isEmpty)
        }
        let truncated = try Fixtures.data("workflow_run.completed.attempt10.json").prefix(500)
        let error = #expect(throws: WebhookDecodingError.self) {
            try WebhookDecoder.decode(event: "workflow_run", body: truncated, contentType: nil)
        }
        #expect(error.map { if case .invalidJSON = $0 { true } else { false } } == true)
    }

    @Test func formBodyWithoutPayloadField() {
        #expect(throws: WebhookDecodingError.missingPayloadField) {
            try WebhookDecoder.decode(
                event: "workflow_job", body: Data("json=%7B%7D&x=1".utf8),
                contentType: "application/x-www-form-urlencoded"
            )
        }
        #expect(throws: WebhookDecodingError.missingPayloadField) {
            try WebhookDecoder.decode(event: "workflow_job", body: Data("payloads=%7B%7D".utf8), contentType: nil)
        }
    }

    @Test func missingRequiredFields() throws {
        let cases: [(String, (inout [String: Any]) -> Void)] = [
            ("workflow_job.id", { $0["id"] = nil }),
            ("workflow_job.id", { $0["id"] = NSNull() }),
            ("workflow_job.run_id", { $0["run_id"] = nil }),
            ("workflow_job.name", { $0["name"] = nil }),
        ]
        for (path, edit) in cases {
            let body = try editedJob("workflow_job.completed.attempt10-test.json", edit)
            #expect(throws: WebhookDecodingError.missingField(path)) {
                try WebhookDecoder.decode(event: "workflow_job", body: body, contentType: "application/json")
            }
        }
        #expect(throws: WebhookDecodingError.missingField("workflow_job")) {
            try WebhookDecoder.decode(event: "workflow_job", body: Data(#"{"action":"queued"}"#.utf8), contentType: nil)
        }
        let run = try edited("workflow_run.completed.attempt10.json") { payload in
            var run = payload["workflow_run"] as? [String: Any] ?? [:]
            run["id"] = nil
            payload["workflow_run"] = run
        }
        #expect(throws: WebhookDecodingError.missingField("workflow_run.id")) {
            try WebhookDecoder.decode(event: "workflow_run", body: run, contentType: nil)
        }
    }

    @Test func fieldsOfTheWrongType() throws {
        let cases: [(WebhookDecodingError, (inout [String: Any]) -> Void)] = [
            (.invalidField("workflow_job.id", expected: "a whole number"), { $0["id"] = "17556741424" }),
            (.invalidField("workflow_job.id", expected: "a whole number that fits in 64 bits"), { $0["id"] = 1.5 }),
            (.invalidField("workflow_job.name", expected: "a string"), { $0["name"] = 42 }),
            (.invalidField("workflow_job.labels", expected: "an array"), { $0["labels"] = "ubuntu-latest" }),
            (.invalidField("workflow_job.steps[0]", expected: "an object"), { $0["steps"] = [1] }),
        ]
        for (expected, edit) in cases {
            let body = try editedJob("workflow_job.completed.attempt10-test.json", edit)
            #expect(throws: expected) {
                try WebhookDecoder.decode(event: "workflow_job", body: body, contentType: "application/json")
            }
        }
    }

    /// Signed but impossible values: an attempt of 0 or a negative id once passed decoding and then
    /// broke the store's `CHECK (attempt >= 1)`, answered 503 on every redelivery.
    @Test func idsAttemptsAndNumbersOutOfRangeNameTheField() throws {
        let range = "a whole number from 1 to 9007199254740991"
        let jobCases: [(String, (inout [String: Any]) -> Void)] = [
            ("workflow_job.run_attempt", { $0["run_attempt"] = 0 }),
            ("workflow_job.run_attempt", { $0["run_attempt"] = -3 }),
            ("workflow_job.id", { $0["id"] = 0 }),
            ("workflow_job.id", { $0["id"] = -17_556_741_424 }),
            ("workflow_job.run_id", { $0["run_id"] = -1 }),
            ("workflow_job.run_id", { $0["run_id"] = 9_007_199_254_740_992 }),
        ]
        for (field, edit) in jobCases {
            let body = try editedJob("workflow_job.completed.attempt10-test.json", edit)
            #expect(throws: WebhookDecodingError.invalidField(field, expected: range)) {
                try WebhookDecoder.decode(event: "workflow_job", body: body, contentType: "application/json")
            }
        }
        let runCases: [(String, (inout [String: Any]) -> Void)] = [
            ("workflow_run.run_attempt", { $0["run_attempt"] = 0 }),
            ("workflow_run.id", { $0["id"] = -5 }),
            ("workflow_run.run_number", { $0["run_number"] = 0 }),
            ("workflow_run.workflow_id", { $0["workflow_id"] = -2 }),
            ("workflow_run.pull_requests[0].number", { $0["pull_requests"] = [["number": 0]] }),
        ]
        for (field, edit) in runCases {
            let body = try edited("workflow_run.completed.attempt10.json") { payload in
                var run = payload["workflow_run"] as? [String: Any] ?? [:]
                edit(&run)
                payload["workflow_run"] = run
            }
            #expect(throws: WebhookDecodingError.invalidField(field, expected: range)) {
                try WebhookDecoder.decode(event: "workflow_run", body: body, contentType: nil)
            }
        }
        // The edges themselves decode.
        let largest = try editedJob("workflow_job.completed.attempt10-test.json") {
            $0["run_id"] = 9_007_199_254_740_991
            $0["run_attempt"] = 1
        }
        guard
            case .workflowJob(let event) = try WebhookDecoder.decode(
                event: "workflow_job", body: largest, contentType: nil)
        else { Issue.record("not a job"); return }
        #expect(event.job.runID == 9_007_199_254_740_991)
        #expect(event.job.runAttempt == 1)
    }

    @Test func unparseableTimestampsNameTheField() throws {
        let timestamp = "an ISO 8601 timestamp such as 2023-10-13T10:11:52Z"
        let created = try editedJob("workflow_job.completed.attempt10-test.json") { $0["created_at"] = "2023-10-13" }
        #expect(throws: WebhookDecodingError.invalidField("workflow_job.created_at", expected: timestamp)) {
            try WebhookDecoder.decode(event: "workflow_job", body: created, contentType: nil)
        }
        let run = try edited("workflow_run.completed.attempt10.json") { payload in
            var run = payload["workflow_run"] as? [String: Any] ?? [:]
            run["run_started_at"] = "2023-10-13T25:00:00Z"
            payload["workflow_run"] = run
        }
        #expect(throws: WebhookDecodingError.invalidField("workflow_run.run_started_at", expected: timestamp)) {
            try WebhookDecoder.decode(event: "workflow_run", body: run, contentType: nil)
        }
    }

    // MARK: Only what the card needs

    /// Nothing reads a step's number but the JSON dump: Gitea's 0, a negative one, a string, a
    /// fraction, null or none at all decode, the number nil when not a whole number.
    @Test(
        arguments: [("0", 0), ("-1", -1), (#""1""#, nil), ("1.5", nil), ("null", nil), (nil, nil)] as [(String?, Int?)])
    func anyStepNumberIsRead(number: String?, expected: Int?) throws {
        let value = try number.map { try JSONSerialization.jsonObject(with: Data($0.utf8), options: .fragmentsAllowed) }
        let body = try editedJob("workflow_job.completed.attempt10-test.json") { job in
            var steps = job["steps"] as? [[String: Any]] ?? []
            steps[1]["number"] = value
            job["steps"] = steps
        }
        let event = try WebhookDecoder.decode(event: "workflow_job", body: body, contentType: nil)
        guard case .workflowJob(let decoded) = event else {
            Issue.record("not a job: \(event)")
            return
        }
        #expect(decoded.job.steps[1].number == expected)
        #expect(decoded.job.steps[1].name == "Run actions/checkout@v3")
        #expect(decoded.job.steps.count == 12)
    }

    /// A step's times are read by nothing the card shows: an unparseable one is dropped, not a 400.
    @Test func unparseableStepTimesAreDropped() throws {
        let body = try editedJob("workflow_job.completed.attempt10-test.json") { job in
            var steps = job["steps"] as? [[String: Any]] ?? []
            steps[2]["started_at"] = "yesterday"
            steps[3]["completed_at"] = 5
            job["steps"] = steps
        }
        let event = try WebhookDecoder.decode(event: "workflow_job", body: body, contentType: nil)
        guard case .workflowJob(let decoded) = event else {
            Issue.record("not a job: \(event)")
            return
        }
        #expect(decoded.job.steps[2].startedAt == nil)
        #expect(decoded.job.steps[2].completedAt != nil)
        #expect(decoded.job.steps[3].completedAt == nil)
    }

    /// A failed step without a name is still a failure the job's card turns red for; an alert
    /// then names no step rather than `""`.
    @Test func anUnnamedFailedStepIsReadAndNamesNothing() throws {
        let body = try editedJob("workflow_job.completed.failure.with-organization.json") { job in
            var steps = job["steps"] as? [[String: Any]] ?? []
            for index in steps.indices where steps[index]["conclusion"] as? String == "failure" {
                steps[index]["name"] = nil
            }
            job["steps"] = steps
        }
        let event = try WebhookDecoder.decode(event: "workflow_job", body: body, contentType: nil)
        guard case .workflowJob(let decoded) = event else {
            Issue.record("not a job: \(event)")
            return
        }
        #expect(decoded.job.steps.contains { $0.conclusion == "failure" && $0.name.isEmpty })
        let record = JobRecord(decoded)
        #expect(record.failed)
        #expect(record.failedStep == nil)
    }

    /// The action of a job delivery is its status: a payload without `status` is read by it.
    @Test(arguments: [("queued", JobStatus.queued), ("in_progress", .inProgress), ("completed", .completed)])
    func aJobWithoutStatusTakesItsAction(action: String, status: JobStatus) throws {
        for absent in [true, false] {
            let body = try edited("workflow_job.completed.attempt10-test.json") { payload in
                payload["action"] = action
                var job = payload["workflow_job"] as? [String: Any] ?? [:]
                job["status"] = absent ? nil : NSNull()
                payload["workflow_job"] = job
            }
            let event = try WebhookDecoder.decode(event: "workflow_job", body: body, contentType: nil)
            guard case .workflowJob(let decoded) = event else {
                Issue.record("not a job: \(event)")
                return
            }
            #expect(decoded.job.status == status, "absent: \(absent)")
        }
    }

    /// Gitea's `workflow_run` has no `name` or `path`: the top-level `workflow` object gives both,
    /// and a run's own name, when it has one, wins.
    @Test func aRunWithoutNameTakesTheWorkflowObjects() throws {
        let gitea = try WebhookDecoder.decode(
            event: "workflow_run", body: Fixtures.data("corpus/workflow_run.gitea-shaped-synthetic.in-progress.json"),
            contentType: nil)
        guard case .workflowRun(let decoded) = gitea else {
            Issue.record("not a run: \(gitea)")
            return
        }
        #expect(decoded.run.name == "CI")
        #expect(decoded.run.path == ".gitea/workflows/ci.yml")
        let named = try edited("workflow_run.completed.attempt10.json") { payload in
            payload["workflow"] = ["name": "Other 🚧\u{202E}", "path": ".github/workflows/other.yml"]
        }
        guard
            case .workflowRun(let own) = try WebhookDecoder.decode(event: "workflow_run", body: named, contentType: nil)
        else {
            Issue.record("not a run")
            return
        }
        #expect(own.run.name != "Other 🚧\u{202E}")
        #expect(own.run.path != ".github/workflows/other.yml")
        let odd = try edited("workflow_run.requested.json") { payload in payload["workflow"] = "CI" }
        #expect(throws: Never.self) { try WebhookDecoder.decode(event: "workflow_run", body: odd, contentType: nil) }
    }

    @Test func errorDescriptionsNameWhatToFix() {
        let missing = WebhookDecodingError.missingField("workflow_job.id").description
        #expect(missing.contains("'workflow_job.id'"))
        let invalid = WebhookDecodingError.invalidField("workflow_job.steps[2].started_at", expected: "a string")
            .description
        #expect(invalid.contains("'workflow_job.steps[2].started_at'") && invalid.contains("a string"))
        #expect(WebhookDecodingError.unsupportedContentType("text/plain").description.contains("'text/plain'"))
        #expect(WebhookDecodingError.missingPayloadField.description.contains("'payload'"))
        #expect(WebhookDecodingError.invalidJSON("line 1").description.contains("line 1"))
        #expect(WebhookDecodingError.emptyBody.description.contains("empty"))
    }

    @Test func dottedPathsJoinKeysAndIndices() {
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int?
            init(stringValue: String) { self.stringValue = stringValue }
            init(intValue: Int) {
                self.stringValue = "Index \(intValue)"
                self.intValue = intValue
            }
        }
        let path: [any CodingKey] = [
            Key(stringValue: "workflow_job"), Key(stringValue: "steps"), Key(intValue: 2), Key(stringValue: "name"),
        ]
        #expect(WebhookDecoder.dottedPath(path) == "workflow_job.steps[2].name")
    }
}

// MARK: - Helpers

extension WebhookDecoderTests {
    /// `workflow_job` from `workflow_job.queued.attempt3.json`: the event header is the name's prefix.
    private func eventName(of fixture: String) -> String {
        String(fixture.prefix { $0 != "." })
    }

    private func decodeFixture(_ name: String) throws -> WebhookEvent {
        try WebhookDecoder.decode(
            event: eventName(of: name), body: Fixtures.data(name), contentType: "application/json")
    }

    private func job(_ name: String) throws -> WorkflowJobEvent {
        try #require(jobEvent(try decodeFixture(name)))
    }

    private func run(_ name: String) throws -> WorkflowRunEvent {
        try #require(runEvent(try decodeFixture(name)))
    }

    private func jobEvent(_ event: WebhookEvent) -> WorkflowJobEvent? {
        if case .workflowJob(let job) = event { return job }
        return nil
    }

    private func runEvent(_ event: WebhookEvent) -> WorkflowRunEvent? {
        if case .workflowRun(let run) = event { return run }
        return nil
    }

    private func pingEvent(_ event: WebhookEvent) -> PingEvent? {
        if case .ping(let ping) = event { return ping }
        return nil
    }

    /// A fixture re-serialised after `edit` changed its top-level object.
    private func edited(_ name: String, _ edit: (inout [String: Any]) -> Void) throws -> Data {
        var payload = try #require(JSONSerialization.jsonObject(with: Fixtures.data(name)) as? [String: Any])
        edit(&payload)
        return try JSONSerialization.data(withJSONObject: payload)
    }

    /// A `workflow_job` fixture re-serialised after `edit` changed its `workflow_job` object.
    private func editedJob(
        _ name: String, removingRepository: Bool = false, _ edit: (inout [String: Any]) -> Void
    ) throws -> Data {
        try edited(name) { payload in
            var job = payload["workflow_job"] as? [String: Any] ?? [:]
            edit(&job)
            payload["workflow_job"] = job
            if removingRepository { payload["repository"] = nil }
        }
    }
}
