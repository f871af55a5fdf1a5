import BridgeCore

/// Builds the deliveries of a scripted workflow run, for tests of behaviours no recording shows:
/// matrix fan-outs, `needs:` waves, approvals, failures, re-runs. Times are offsets from `start`.
public struct RunScript: Sendable {
    /// One job of a wave: its name (matrix suffix and caller prefix included), how long it runs,
    /// and how it ends.
    public struct Job: Sendable {
        public var name: String
        public var duration: Double
        public var conclusion: String
        /// How long it stays queued before a runner takes it: 2 s, a hosted runner's usual
        /// pickup, unless a script makes it wait for one (`activity.runner_wait`).
        public var queuedFor: Double
        /// The runners it asks for (`runs-on`).
        public var labels: [String]

        public init(
            _ name: String, duration: Double = 30, conclusion: String = "success", queuedFor: Double = 2,
            labels: [String] = ["ubuntu-latest"]
        ) {
            self.name = name
            self.duration = duration
            self.conclusion = conclusion
            self.queuedFor = queuedFor
            self.labels = labels
        }
    }

    public var repository = Repository(
        fullName: "acme/widgets", htmlURL: "https://github.com/acme/widgets", defaultBranch: "main")
    /// Who pushed (`actor`, and `triggering_actor` too), and the head commit's title.
    public var actor = "octocat"
    public var commitTitle = "Fix the build"
    /// `head_repository.full_name`: nil sends none (a `push` run is then the repository's own, and
    /// the scripts' recorded bodies stay as they were); another name makes every run delivery a
    /// fork's (jobs carry no head repository, as on GitHub).
    public var headRepository: String?
    /// What triggered the run (`push`, `pull_request`, `pull_request_target`, …).
    public var event = "push"
    public var runID: Int
    public var attempt: Int
    public var runNumber: Int
    public var workflow: String
    public var branch: String
    public var start: UnixTime
    /// The first job id; later jobs count up from it, as GitHub creates them.
    public var firstJobID: Int

    public init(
        runID: Int = 9_000, attempt: Int = 1, runNumber: Int = 42, workflow: String = "CI", branch: String = "main",
        start: UnixTime = 1_700_000_000, firstJobID: Int = 50_000
    ) {
        self.runID = runID
        self.attempt = attempt
        self.runNumber = runNumber
        self.workflow = workflow
        self.branch = branch
        self.start = start
        self.firstJobID = firstJobID
    }

    public func run(_ action: String, at offset: Double, conclusion: String? = nil) -> WebhookEvent {
        let status: RunStatus =
            switch action {
            case "completed": .completed
            case "in_progress": .inProgress
            default: .queued
            }
        return .workflowRun(
            WorkflowRunEvent(
                action: action,
                run: WorkflowRun(
                    id: runID, runAttempt: attempt, runNumber: runNumber, workflowID: 7, name: workflow,
                    path: ".github/workflows/ci.yml", headBranch: branch, headSHA: "abc123", event: event,
                    status: status, conclusion: conclusion, htmlURL: repository.htmlURL! + "/actions/runs/\(runID)",
                    runStartedAt: start, createdAt: start, updatedAt: start + offset, actor: actor,
                    triggeringActor: actor, commitTitle: commitTitle,
                    headRepository: headRepository),
                repository: repository))
    }

    /// One `workflow_job` delivery. `action` is `queued`, `waiting`, `in_progress` or `completed`;
    /// `labels` are the runners it asks for (`runs-on`).
    public func job(
        _ id: Int, _ name: String, _ action: String, createdAt: Double, startedAt: Double? = nil,
        completedAt: Double? = nil, conclusion: String? = nil, environment: String? = nil,
        labels: [String] = ["ubuntu-latest"]
    ) -> WebhookEvent {
        let status = JobStatus(rawValue: action) ?? .queued
        let steps: [JobStep] =
            status == .completed && conclusion != "skipped"
            ? [JobStep(number: 1, name: "Run", status: .completed, conclusion: conclusion)] : []
        return .workflowJob(
            WorkflowJobEvent(
                action: action,
                job: WorkflowJob(
                    id: id, runID: runID, runAttempt: attempt, name: name, workflowName: workflow, headBranch: branch,
                    headSHA: "abc123", status: status, conclusion: conclusion, createdAt: start + createdAt,
                    startedAt: startedAt.map { start + $0 }, completedAt: completedAt.map { start + $0 },
                    steps: steps, labels: labels, runnerName: status.rank >= 1 ? "runner-1" : nil,
                    htmlURL: repository.htmlURL.map { $0 + "/actions/runs/\(runID)/job/\(id)" }),
                repository: repository, deploymentEnvironment: environment))
    }

    /// The deliveries of a whole run, in the order GitHub would send them: `requested`, then each
    /// wave's jobs queued, started and completed (a wave starts when the one before finished, as
    /// with `needs:`), then `completed` with `conclusion` (nil: failure if a job failed, else success;
    /// pass `complete: false` to leave the run unfinished).
    public func deliveries(waves: [[Job]], conclusion: String? = nil, complete: Bool = true) -> [WebhookEvent] {
        var events = [run("requested", at: 0), run("in_progress", at: 1)]
        var clock: Double = 2
        var nextID = firstJobID
        var failed = false
        for wave in waves {
            let ids = wave.indices.map { nextID + $0 }
            nextID += wave.count
            for (id, job) in zip(ids, wave) {
                events.append(self.job(id, job.name, "queued", createdAt: clock, labels: job.labels))
            }
            for (id, job) in zip(ids, wave).sorted(by: { ($0.1.queuedFor, $0.0) < ($1.1.queuedFor, $1.0) }) {
                events.append(
                    self.job(
                        id, job.name, "in_progress", createdAt: clock, startedAt: clock + job.queuedFor,
                        labels: job.labels))
            }
            let finishing = zip(ids, wave).sorted { $0.1.queuedFor + $0.1.duration < $1.1.queuedFor + $1.1.duration }
            for (id, job) in finishing {
                events.append(
                    self.job(
                        id, job.name, "completed", createdAt: clock, startedAt: clock + job.queuedFor,
                        completedAt: clock + job.queuedFor + job.duration, conclusion: job.conclusion,
                        labels: job.labels))
                failed = failed || job.conclusion == "failure"
            }
            clock += 1 + (wave.map { $0.queuedFor + $0.duration }.max() ?? 0)
        }
        if complete {
            events.append(run("completed", at: clock, conclusion: conclusion ?? (failed ? "failure" : "success")))
        }
        return events
    }
}
