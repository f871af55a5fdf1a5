import Foundation

/// What the bridge knows of one job: the furthest-along snapshot GitHub sent of it.
///
/// Deliveries arrive in any order and may repeat, so a record is never overwritten by an older
/// snapshot: `merged(with:)` keeps whichever of two snapshots ranks higher in a total order
/// (status first, then timestamps). Because it is a maximum over a total order, merging the same
/// snapshots in any order, with any duplicates, ends in the same record.
public struct JobRecord: Sendable, Equatable, Codable {
    public var id: Int
    public var name: String
    public var status: JobStatus
    public var conclusion: String?
    public var createdAt: UnixTime?
    public var startedAt: UnixTime?
    public var completedAt: UnixTime?
    /// The environment a `waiting` job waits for approval of; nil when it is not waiting.
    public var waitingEnvironment: String?
    /// True for a job the Checks API created (completed, no runner, no labels, no steps): it is a
    /// check, not a step of the workflow, and is never drawn.
    public var isCheckRun: Bool
    public var htmlURL: String?
    /// The name of the job's first step that failed or timed out (`steps[]`), for an alert's body.
    public var failedStep: String?
    /// The environment any delivery of the job named (`deployment.environment`), whatever its
    /// status: GitHub does not order deliveries, and the one that names the environment may be
    /// older than the `waiting` one that does not, which would otherwise lose it.
    public var deploymentEnvironment: String?
    /// `workflow_job.labels`: the runners that may take the job (`self-hosted`, `arm64`), said
    /// when it waits for one (`RunnerWait`); nil when no delivery named any.
    public var labels: [String]?

    public init(
        id: Int, name: String, status: JobStatus, conclusion: String? = nil, createdAt: UnixTime? = nil,
        startedAt: UnixTime? = nil, completedAt: UnixTime? = nil, waitingEnvironment: String? = nil,
        isCheckRun: Bool = false, htmlURL: String? = nil, failedStep: String? = nil,
        deploymentEnvironment: String? = nil, labels: [String]? = nil
    ) {
        self.deploymentEnvironment = deploymentEnvironment
        self.labels = labels
        self.id = id
        self.name = name
        self.status = status
        self.conclusion = conclusion
        self.createdAt = createdAt
        self.startedAt = startedAt
        self.completedAt = completedAt
        self.waitingEnvironment = waitingEnvironment
        self.isCheckRun = isCheckRun
        self.htmlURL = htmlURL
        self.failedStep = failedStep
    }

    /// The record one `workflow_job` delivery describes.
    public init(_ event: WorkflowJobEvent) {
        let job = event.job
        let checkRun =
            job.status == .completed && job.conclusion != "skipped" && job.runnerName == nil
            && job.labels.isEmpty && job.steps.isEmpty
        self.init(
            id: job.id, name: job.name, status: job.status, conclusion: job.status == .completed ? job.conclusion : nil,
            createdAt: job.createdAt, startedAt: job.status.rank >= JobStatus.inProgress.rank ? job.startedAt : nil,
            completedAt: job.status == .completed ? job.completedAt : nil,
            waitingEnvironment: job.status == .waiting ? (event.deploymentEnvironment ?? "") : nil,
            isCheckRun: checkRun, htmlURL: job.htmlURL,
            failedStep: job.status == .completed ? job.steps.first(where: Self.stepFailed).flatMap(Self.stepName) : nil,
            deploymentEnvironment: event.deploymentEnvironment.flatMap { $0.isEmpty ? nil : $0 },
            labels: job.labels.isEmpty ? nil : job.labels)
    }

    /// The name an alert gives a step; nil for a step the payload left unnamed.
    static func stepName(_ step: JobStep) -> String? { step.name.isEmpty ? nil : step.name }

    /// A step that failed or timed out: what an alert names.
    static func stepFailed(_ step: JobStep) -> Bool {
        step.conclusion == "failure" || step.conclusion == "timed_out"
    }

    public var isFinished: Bool { status == .completed }
    public var isRunning: Bool { status == .inProgress }
    public var isWaiting: Bool { status == .waiting }

    /// True when the job ended in a way that turns its group red.
    public var failed: Bool {
        guard isFinished, let conclusion else { return false }
        return ["failure", "timed_out", "startup_failure"].contains(conclusion)
    }

    /// How long the job ran, when it ran: the figure history keeps for step weights and estimates.
    public var runDuration: Double? {
        guard isFinished, conclusion != "skipped", let startedAt, let completedAt, completedAt >= startedAt else {
            return nil
        }
        return completedAt - startedAt
    }

    /// The snapshot that is further along of the two; see the type's documentation.
    public func merged(with other: JobRecord) -> JobRecord {
        let otherRanksHigher = Self.orderKey(self).lexicographicallyPrecedes(Self.orderKey(other))
        var best = otherRanksHigher ? other : self
        // A creation time is the same fact in every snapshot; keep the earliest one reported, since
        // some payloads repeat placeholders.
        best.createdAt = [createdAt, other.createdAt].compactMap { $0 }.min()
        // The environment is one fact too, named by whichever delivery carried `deployment`; the
        // greatest name should two differ, so the result does not depend on the order.
        best.deploymentEnvironment = [deploymentEnvironment, other.deploymentEnvironment].compactMap { $0 }.max()
        // The labels too are one fact of the job, whichever snapshot carried them; the greatest
        // list should two differ, for the same reason.
        best.labels = [labels, other.labels].compactMap { $0 }.max { $0.lexicographicallyPrecedes($1) }
        if best.isWaiting, best.waitingEnvironment?.isEmpty != false, let environment = best.deploymentEnvironment {
            best.waitingEnvironment = environment
        }
        return best
    }

    /// Status rank, then waiting before queued (an approval wait is news), then timestamps, then the
    /// remaining fields, so that two different snapshots never tie.
    private static func orderKey(_ record: JobRecord) -> [String] {
        func time(_ value: UnixTime?) -> String { value.map { String(format: "%015.3f", $0) } ?? "" }
        return [
            String(record.status.rank), record.isWaiting ? "1" : "0", time(record.completedAt), time(record.startedAt),
            record.conclusion ?? "", record.isCheckRun ? "0" : "1", record.waitingEnvironment ?? "", record.name,
            record.htmlURL ?? "",
        ]
    }
}
