import BridgeTestSupport
import Testing

@testable import BridgeCore

@Suite("Step plan")
struct StepPlannerTests {
    @Test(
        "base names strip a caller prefix and a matrix suffix",
        arguments: [
            ("call / test (1.23)", "test"), ("build (ubuntu, 18)", "build"), ("lint", "lint"),
            ("call-workflow-passing-data / test (1.23)", "test"), ("linux-focal-py3.7-gcc7 / build", "build"),
            ("deploy (prod (eu))", "deploy"), ("(weird)", "(weird)"), ("a / b / c", "c"),
        ])
    func baseNames(name: String, expected: String) {
        #expect(JobGroupName.baseName(of: name) == expected)
    }

    private func state(_ script: RunScript, _ events: [WebhookEvent]) -> RunState {
        var engine = BridgeEngine()
        for event in events { _ = engine.receive(event, at: script.start) }
        return engine.runs[
            RunKey(repository: script.repository.fullName, runID: script.runID, attempt: script.attempt)]!
    }

    @Test("groups are ordered by their first job's id, not by arrival")
    func orderByJobID() {
        let script = RunScript()
        let plan = StepPlanner.plan(
            for: state(
                script,
                [
                    script.job(3, "deploy", "queued", createdAt: 5), script.job(1, "build", "queued", createdAt: 1),
                    script.job(2, "test (a)", "queued", createdAt: 3),
                    script.job(4, "test (b)", "queued", createdAt: 3),
                ]))
        #expect(plan.groups.map(\.name) == ["build", "test", "deploy"])
        #expect(plan.groups.map(\.rows) == [1, 2, 1])
    }

    @Test("a 16-shard matrix draws 10 rows and counts all 16 jobs")
    func wideMatrix() {
        let script = RunScript()
        let events = (0..<16).map { script.job(100 + $0, "shard (\($0))", "queued", createdAt: 1) }
        let plan = StepPlanner.plan(for: state(script, events))
        #expect(plan.groups.count == 1)
        #expect(plan.groups[0].rows == 10)
        #expect(plan.groups[0].totalJobCount == 16)
    }

    @Test("70 job groups fold into 64 steps, the last standing for the rest")
    func seventyGroups() {
        let script = RunScript()
        let events = (0..<70).map { script.job(1_000 + $0, "job-\($0)", "queued", createdAt: 1) }
        let plan = StepPlanner.plan(for: state(script, events))
        #expect(plan.totalSteps == 64)
        #expect(plan.groups.last?.name == "+7 more")
        #expect(plan.groups.last?.totalJobCount == 7)
        #expect(plan.groups.reduce(0) { $0 + $1.totalJobCount } == 70)
    }

    @Test("check-run jobs (no runner, labels or steps) are not steps; skipped jobs are")
    func checkRunsAreNotSteps() {
        let script = RunScript()
        let checkRun = WebhookEvent.workflowJob(
            WorkflowJobEvent(
                action: "completed",
                job: WorkflowJob(
                    id: 7, runID: script.runID, name: "Test Report", workflowName: "CI", status: .completed,
                    conclusion: "success"),
                repository: script.repository))
        let skipped = WebhookEvent.workflowJob(
            WorkflowJobEvent(
                action: "completed",
                job: WorkflowJob(
                    id: 8, runID: script.runID, name: "docs", workflowName: "CI", status: .completed,
                    conclusion: "skipped"),
                repository: script.repository))
        let plan = StepPlanner.plan(
            for: state(script, [script.job(1, "build", "queued", createdAt: 0), checkRun, skipped]))
        #expect(plan.groups.map(\.name) == ["build", "docs"])
    }

    @Test("current step: 0 before any job starts, then the first running group, else the first unfinished")
    func currentStep() {
        let script = RunScript()
        var events = [script.job(1, "build", "queued", createdAt: 0), script.job(2, "test", "queued", createdAt: 0)]
        #expect(StepPlanner.plan(for: state(script, events)).currentStep == 0)
        events.append(script.job(2, "test", "in_progress", createdAt: 0, startedAt: 1))
        #expect(StepPlanner.plan(for: state(script, events)).currentStep == 2)
        events.append(
            script.job(2, "test", "completed", createdAt: 0, startedAt: 1, completedAt: 9, conclusion: "success"))
        #expect(StepPlanner.plan(for: state(script, events)).currentStep == 1)
    }

    @Test("a job never moves back: a late queued or in_progress after completed changes nothing")
    func forwardOnly() {
        let script = RunScript()
        let completed = script.job(
            1, "build", "completed", createdAt: 0, startedAt: 1, completedAt: 9, conclusion: "success")
        let late = [
            script.job(1, "build", "in_progress", createdAt: 0, startedAt: 1),
            script.job(1, "build", "queued", createdAt: 0),
        ]
        let record = state(script, [completed] + late).jobs[1]
        #expect(record?.status == .completed)
        #expect(record?.conclusion == "success")
        #expect(record == state(script, [completed]).jobs[1])
    }

    @Test("labels are cut to 32 characters with an ellipsis")
    func longLabel() {
        let name = String(repeating: "x", count: 40)
        let label = ActivityContentBuilder.label(name)
        #expect(label.count == 32)
        #expect(label.hasSuffix("…"))
        #expect(ActivityContentBuilder.label("short") == "short")
    }

    @Test("history: the median of recent runs, and the seed prefers a success on the same branch")
    func historyLookups() {
        var history = RunHistory()
        func summary(_ run: Int, branch: String, conclusion: String, build: Double) -> RunSummary {
            RunSummary(
                key: RunKey(repository: "acme/widgets", runID: run, attempt: 1), workflow: "CI", branch: branch,
                conclusion: conclusion, finishedAt: Double(run),
                groups: [GroupSummary(name: "build", jobCount: 1, duration: build)])
        }
        history.record(summary(1, branch: "main", conclusion: "success", build: 10))
        history.record(summary(2, branch: "main", conclusion: "failure", build: 1_000))
        history.record(summary(3, branch: "dev", conclusion: "success", build: 20))
        #expect(history.estimates(repository: "acme/widgets", workflow: "CI", excluding: 99)["build"] == 20)
        #expect(history.seed(repository: "acme/widgets", workflow: "CI", branch: "main", excluding: 99)?.key.runID == 1)
        #expect(
            history.seed(repository: "acme/widgets", workflow: "CI", branch: "feature", excluding: 99)?.key.runID == 3)
        #expect(history.seed(repository: "acme/widgets", workflow: "Other", branch: "main", excluding: 99) == nil)
    }

    @Test("history: recorded in any order it stays sorted by finish time; a re-record replaces; 20 kept")
    func historyOrder() {
        func summary(_ run: Int, finishedAt: Double, workflow: String = "CI") -> RunSummary {
            RunSummary(
                key: RunKey(repository: "acme/widgets", runID: run, attempt: 1), workflow: workflow, branch: "main",
                conclusion: "success", finishedAt: finishedAt, groups: [])
        }
        var generator = SystemRandomNumberGenerator()
        let runs = Array(1...30).shuffled(using: &generator)
        var history = RunHistory()
        for run in runs { history.record(summary(run, finishedAt: Double(run % 7))) }
        history.record(summary(100, finishedAt: 3, workflow: "Other"))
        // Re-recorded with a later finish: moves, not duplicated.
        history.record(summary(100, finishedAt: 50, workflow: "Other"))
        let order = history.summaries.map { ($0.finishedAt, $0.key) }
        #expect(zip(order, order.dropFirst()).allSatisfy { $0 < $1 })
        #expect(history.summaries.filter { $0.workflow == "CI" }.count == RunHistory.runsKeptPerWorkflow)
        #expect(history.summaries.filter { $0.key.runID == 100 }.map(\.finishedAt) == [50])
        #expect(history.summaries.last?.key.runID == 100)
    }
}
