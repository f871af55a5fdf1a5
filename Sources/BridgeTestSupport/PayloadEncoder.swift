import BridgeCore
import Foundation

/// Turns decoded events back into GitHub-shaped JSON bodies, so scripted runs (`RunScript`) can be
/// delivered over HTTP like real ones. Only the fields the decoder reads are written.
public enum PayloadEncoder {
    /// The event name (`X-GitHub-Event`) and the JSON body of a delivery.
    public static func encode(_ event: WebhookEvent) -> (event: String, body: Data) {
        switch event {
        case .workflowJob(let delivery):
            var object: [String: JSONValue] = [
                "action": .string(delivery.action), "workflow_job": job(delivery.job),
                "repository": repository(delivery.repository),
            ]
            if let environment = delivery.deploymentEnvironment {
                object["deployment"] = ["environment": .string(environment)]
            }
            return ("workflow_job", JSONValue.object(object).canonicalData)
        case .workflowRun(let delivery):
            let object: JSONValue = [
                "action": .string(delivery.action), "workflow_run": run(delivery.run),
                "repository": repository(delivery.repository),
            ]
            return ("workflow_run", object.canonicalData)
        case .ping(let ping):
            var object: [String: JSONValue] = [
                "zen": ping.zen.map { .string($0) } ?? .null,
                "hook_id": ping.hookID.map { .number(Double($0)) } ?? .null,
                "hook": ["events": .array(ping.events.map { .string($0) })],
            ]
            if let repository = ping.repository { object["repository"] = self.repository(repository) }
            return ("ping", JSONValue.object(object).canonicalData)
        case .unsupported(let name):
            return (name, Data("{}".utf8))
        }
    }

    static func repository(_ repository: Repository) -> JSONValue {
        [
            "full_name": .string(repository.fullName), "name": .string(repository.name),
            "html_url": repository.htmlURL.map { .string($0) } ?? .null,
            "default_branch": optional(repository.defaultBranch),
        ]
    }

    static func job(_ job: WorkflowJob) -> JSONValue {
        [
            "id": .number(Double(job.id)), "run_id": .number(Double(job.runID)),
            "run_attempt": .number(Double(job.runAttempt)), "name": .string(job.name),
            "workflow_name": optional(job.workflowName), "head_branch": optional(job.headBranch),
            "head_sha": optional(job.headSHA), "status": .string(job.status.rawValue),
            "conclusion": optional(job.conclusion), "created_at": time(job.createdAt),
            "started_at": time(job.startedAt), "completed_at": time(job.completedAt),
            "labels": .array(job.labels.map { .string($0) }), "runner_name": optional(job.runnerName),
            "html_url": optional(job.htmlURL),
            "steps": .array(
                job.steps.map { step in
                    [
                        "number": step.number.map { .number(Double($0)) } ?? .null, "name": .string(step.name),
                        "status": .string(step.status.rawValue), "conclusion": optional(step.conclusion),
                        "started_at": time(step.startedAt), "completed_at": time(step.completedAt),
                    ]
                }),
        ]
    }

    /// `head_repository` only when the run names one: the scripted runs' recorded bodies predate it.
    static func run(_ run: WorkflowRun) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .number(Double(run.id)), "run_attempt": .number(Double(run.runAttempt)),
            "run_number": run.runNumber.map { .number(Double($0)) } ?? .null,
            "workflow_id": run.workflowID.map { .number(Double($0)) } ?? .null, "name": optional(run.name),
            "display_title": optional(run.displayTitle), "path": optional(run.path),
            "head_branch": optional(run.headBranch), "head_sha": optional(run.headSHA), "event": optional(run.event),
            "status": .string(run.status.rawValue), "conclusion": optional(run.conclusion),
            "html_url": optional(run.htmlURL), "run_started_at": time(run.runStartedAt),
            "created_at": time(run.createdAt), "updated_at": time(run.updatedAt),
            "pull_requests": .array(run.pullRequests.map { ["number": .number(Double($0.number))] }),
            "actor": run.actor.map { ["login": .string($0)] } ?? .null,
            "triggering_actor": run.triggeringActor.map { ["login": .string($0)] } ?? .null,
            "head_commit": run.commitTitle.map { ["message": .string($0)] } ?? .null,
        ]
        if let head = run.headRepository {
            object["head_repository"] = [
                "full_name": .string(head), "id": run.headRepositoryID.map { .number(Double($0)) } ?? .null,
            ]
        }
        return .object(object)
    }

    static func optional(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }

    static func time(_ value: UnixTime?) -> JSONValue {
        value.map { .string(GitHubTimestamp.format($0)) } ?? .null
    }
}
