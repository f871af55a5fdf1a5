import BridgeCore
import BridgeStore
import Foundation

/// The JSON documents of runs: `runs list --json` / `GET /api/runs` and `runs show --json` /
/// `GET /api/runs/{id}`. One builder for the CLI and the admin API, so a script written against
/// one works against the other.
public enum RunDocument {
    /// One entry of the run list. `updates_spent` is there so a maintainer scanning the list sees
    /// which runs ate the monthly budget without opening each one.
    public static func listing(_ run: BridgeDatabase.RunListing) -> JSONValue {
        [
            "repository": .string(run.key.repository), "run_id": .number(Double(run.key.runID)),
            "attempt": .number(Double(run.key.attempt)), "workflow": run.workflow.map { .string($0) } ?? .null,
            "branch": run.branch.map { .string($0) } ?? .null, "status": .string(run.status),
            "conclusion": run.conclusion.map { .string($0) } ?? .null, "slug": .string(run.slug),
            "owns_card": .bool(run.holdsLiveActivity), "updated_at": .number(run.updatedAt),
            "last_push_at": run.lastPushAt.map { .number($0) } ?? .null,
            "updates_spent": .number(Double(run.updatesSpent ?? 0)),
        ]
    }

    /// Every attempt of `runID`, newest first, as `runs show --json` prints them; nil when the
    /// run was never recorded (the API's 404).
    public static func json(database: BridgeDatabase, runID: Int) throws -> JSONValue? {
        let attempts = try database.runAttempts(runID: runID)
        guard !attempts.isEmpty else { return nil }
        var documents: [JSONValue] = []
        for stored in attempts {
            let state = stored.state
            let activity = try database.session(slug: stored.slug)
            let ownsActivity = activity?.stored.session.owner == state.key
            documents.append(
                attempt(
                    stored, plan: StepPlanner.plan(for: state), ownsActivity: ownsActivity,
                    phase: activity?.stored.session.phase, desired: ownsActivity ? activity?.stored.desired : nil,
                    acknowledged: ownsActivity ? activity?.acknowledged : nil,
                    pushes: try database.requests(for: state.key),
                    deliveries: try database.listDeliveries(run: state.key, limit: 500),
                    alerts: try database.alerts(repository: state.key.repository, runID: runID),
                    target: activity?.stored.session.identity.target,
                    actions: try database.actions(repository: state.key.repository, runID: runID)))
        }
        return .array(documents)
    }

    /// How the push budget drew the run: its level (null: no card) and why.
    static func decision(_ decision: CardDecision) -> JSONValue {
        [
            "level": decision.level.map { .string($0.rawValue) } ?? .null, "reason": .string(decision.reason),
            "decided_at": .string(GitHubTimestamp.format(decision.decidedAt)),
            "remaining": decision.remaining.map { .number(Double($0)) } ?? .null,
            "forecast_runs": decision.forecastRuns.map { .number(($0 * 10).rounded() / 10) } ?? .null,
        ]
    }

    /// The job the card said waits for a runner: which, since when, its labels, and whether it
    /// still waits.
    static func runnerWait(_ wait: RunnerWait, in state: RunState) -> JSONValue {
        [
            "job_id": .number(Double(wait.jobID)), "job": .string(wait.job),
            "since": .string(GitHubTimestamp.format(wait.since)), "labels": .array(wait.labels.map { .string($0) }),
            "noticed_at": .string(GitHubTimestamp.format(wait.noticedAt)), "waiting": .bool(wait.isCurrent(in: state)),
        ]
    }

    /// An alert of the attempt: why, what it said, to whom, and what PushWard answered.
    static func alert(_ alert: AlertRecord) -> JSONValue {
        [
            "reason": .string(alert.reason.rawValue), "state": .string(alert.state.rawValue),
            "title": .string(alert.title), "audience": .string(AlertSummary.audience(alert)),
            "created_at": .string(GitHubTimestamp.format(alert.createdAt)),
            "sent_at": alert.sentAt.map { .string(GitHubTimestamp.format($0)) } ?? .null,
            "attempts": .number(Double(alert.attempts)), "status": alert.status.map { .number(Double($0)) } ?? .null,
            "detail": alert.detail.map { .string($0) } ?? .null,
            "delivery": alert.delivery.map { .string($0) } ?? .null,
            "notification_id": alert.notificationID.map { .number(Double($0)) } ?? .null,
            "activity_slug": alert.activitySlug.map { .string($0) } ?? .null,
        ]
    }

    /// One attempt: its jobs, the step plan, the card's desired and acknowledged content (only
    /// while the attempt holds the card: otherwise they describe another run), its deliveries and
    /// the requests made for it.
    /// `fork` is the head repository's `owner/name` when the commit comes from a fork (whose author
    /// chose `branch`), null otherwise.
    public static func attempt(
        _ stored: StoredRun, plan: StepPlan, ownsActivity: Bool, phase: ActivitySession.Phase?, desired: JSONValue?,
        acknowledged: JSONValue?, pushes: [RequestRecord], deliveries: [DeliveryRecord], alerts: [AlertRecord] = [],
        target: ActivityTarget? = nil, actions: [ActionRecord] = []
    ) -> JSONValue {
        let state = stored.state
        return [
            "alerts": .array(alerts.filter { $0.run == state.key }.map(Self.alert)),
            "actions": .array(actions.filter { $0.run == state.key }.map(ActionSummary.json)),
            "repository": .string(state.key.repository), "run_id": .number(Double(state.key.runID)),
            "attempt": .number(Double(state.key.attempt)),
            "workflow": state.workflowName.map { .string($0) } ?? .null,
            "branch": state.headBranch.map { .string($0) } ?? .null, "status": .string(stored.status),
            "fork": state.origin.forkName.map { .string($0) } ?? .null,
            "held_for_approval": .bool(state.isHeldForApproval),
            "flaky": .bool(state.passedOnRerun),
            "failed_before": state.failedBefore.map { .array($0.map { .string($0) }) } ?? .null,
            "runner_wait": state.runnerWait.map { Self.runnerWait($0, in: state) } ?? .null,
            "conclusion": state.completion.map { .string($0.conclusion) } ?? .null, "slug": .string(stored.slug),
            "owns_card": .bool(ownsActivity),
            "phase": ownsActivity ? phase.map { .string($0.rawValue) } ?? .null : .null,
            "target": target?.json ?? .null,
            "updates_spent": .number(Double(state.updatesSpent ?? 0)),
            "card_decision": state.cardDecision.map(Self.decision) ?? .null,
            "placement": state.placement?.json ?? .null,
            "steps": .array(
                plan.groups.map { group in
                    [
                        "name": .string(group.name), "origin": .string(group.origin.rawValue),
                        "jobs": .number(Double(group.totalJobCount)),
                        "finished": .number(Double(group.finishedJobCount)),
                        "estimate": group.estimate.map { .number($0) } ?? .null,
                    ]
                }),
            "jobs": .array(
                state.workflowJobs.map { job in
                    [
                        "id": .number(Double(job.id)), "name": .string(job.name),
                        "status": .string(job.status.rawValue),
                        "conclusion": job.conclusion.map { .string($0) } ?? .null,
                    ]
                }),
            "desired": desired ?? .null, "acknowledged": acknowledged ?? .null,
            "deliveries": .array(
                deliveries.map { delivery in
                    [
                        "id": .string(delivery.id), "event": .string(delivery.event),
                        "action": delivery.action.map { .string($0) } ?? .null,
                        "received_at": .number(delivery.receivedAt), "outcome": .string(delivery.outcome.rawValue),
                    ]
                }),
            "pushes": .array(
                pushes.map { push in
                    [
                        "kind": .string(push.kind), "method": .string(push.method), "path": .string(push.path),
                        "sent_at": .number(push.sentAt), "status": push.status.map { .number(Double($0)) } ?? .null,
                        "outcome": .string(push.outcome),
                        "body": (try? JSONValue(parsing: Data(push.body.utf8))) ?? .null,
                    ]
                }),
        ]
    }
}
