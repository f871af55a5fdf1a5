import Foundation

/// A run as GitHub's REST API describes it, turned into the deliveries GitHub would have sent:
/// one `workflow_job` per job, then one `workflow_run`, each with the API's own objects (the
/// same shapes webhooks carry) and timestamps, so the core applies them as it applies webhooks
/// and a run whose deliveries were lost ends with its true conclusion and times.
///
/// Each gets an id made of its content (`api-` and 32 hex digits of SHA-256): the same answer
/// read twice is a duplicate and changes nothing; a changed one (a job that finished since) is new.
public struct APIObservation: Sendable, Equatable {
    public var event: String
    public var body: Data
    public var id: String

    /// The `hook_id` the deliveries are recorded with, so `explain` and `runs show` can say a
    /// delivery came from a lookup, not from GitHub's webhook.
    public static let hookID = "github-api"

    /// From `GET …/actions/runs/{id}/attempts/{n}` and its jobs; nil when the run object lacks what
    /// a `workflow_run` delivery needs (an id, a status, the repository).
    public static func observations(run: JSONValue, jobs: JSONValue) -> [APIObservation]? {
        guard let repository = run["repository"], repository["full_name"]?.stringValue != nil,
            run["id"]?.intValue != nil, let status = run["status"]?.stringValue
        else { return nil }
        var found: [APIObservation] = []
        for job in jobs["jobs"]?.arrayValue ?? [] {
            guard let jobStatus = job["status"]?.stringValue, job["id"]?.intValue != nil else { continue }
            let action = ["queued", "in_progress", "completed", "waiting"].contains(jobStatus) ? jobStatus : "queued"
            found.append(
                observation(
                    "workflow_job", ["action": .string(action), "workflow_job": job, "repository": repository]))
        }
        let runAction =
            switch status {
            case "completed": "completed"
            case "in_progress": "in_progress"
            default: "requested"
            }
        found.append(
            observation("workflow_run", ["action": .string(runAction), "workflow_run": run, "repository": repository]))
        return found
    }

    static func observation(_ event: String, _ body: JSONValue) -> APIObservation {
        let data = body.canonicalData
        let digest = SHA256.hex(SHA256.digest(Array(event.utf8) + [0] + Array(data)))
        return APIObservation(event: event, body: data, id: "api-" + digest.prefix(32))
    }
}
