import BridgeCore
import Foundation

/// A `workflow_run` body from a fork in the shape GitHub records it, for tests of what a fork's
/// run is given and withheld.
///
/// It starts from a real delivery (`corpus/workflow_run.pkg-pr-new.pr-fork-requested.json`, or
/// the `completed` one: a `pull_request` run whose `head_repository` is a fork) and moves it onto
/// the test's scenario: the base repository, the fork's name, the branch and workflow names the
/// fork's author chose, the event (`pull_request_target` is derived from the recorded
/// `pull_request`: the same objects, another trigger), ids and times. Everything else (the
/// `repository` and `head_repository` objects with their dozens of keys, `workflow`, `sender`,
/// `installation`, `pull_requests: []` as GitHub sends it for a fork) stays as recorded.
public struct ForkRunPayload: Sendable {
    public var repository = "acme/widgets"
    public var fork = "mallory/rocket"
    public var event = "pull_request"
    public var workflow = "Deploy prod"
    public var branch = "main"
    public var actor = "mallory"
    public var runID: Int
    public var runNumber: Int
    public var attempt = 1
    public var start: UnixTime

    public init(runID: Int, runNumber: Int? = nil, start: UnixTime = 1_700_000_000) {
        self.runID = runID
        self.runNumber = runNumber ?? runID
        self.start = start
    }

    /// The body of the `action` delivery (`requested`, `in_progress` or `completed`) at `offset`
    /// seconds after `start`.
    public func body(_ action: String, at offset: Double = 0, conclusion: String? = nil) throws -> Data {
        let recording =
            action == "completed"
            ? "corpus/workflow_run.pkg-pr-new.pr-fork-completed-failure.json"
            : "corpus/workflow_run.pkg-pr-new.pr-fork-requested.json"
        guard var payload = try JSONSerialization.jsonObject(with: TestAssets.fixture(recording)) as? [String: Any],
            var run = payload["workflow_run"] as? [String: Any],
            var base = payload["repository"] as? [String: Any],
            var head = run["head_repository"] as? [String: Any]
        else { throw CocoaError(.coderReadCorrupt) }
        // A run held for a maintainer's approval is `completed` with `action_required` in every
        // delivery, `requested` included (`corpus/workflow_run.octokit.requested-action_required.json`).
        let status =
            switch action {
            case _ where conclusion == "action_required": "completed"
            case "completed": "completed"
            case "in_progress": "in_progress"
            default: "queued"
            }
        func place(_ object: inout [String: Any], as fullName: String) {
            let parts = fullName.split(separator: "/", maxSplits: 1).map(String.init)
            object["full_name"] = fullName
            object["name"] = parts.last ?? fullName
            object["html_url"] = "https://github.com/" + fullName
            if var owner = object["owner"] as? [String: Any] {
                owner["login"] = parts.first ?? fullName
                object["owner"] = owner
            }
        }
        place(&base, as: repository)
        base["default_branch"] = "main"
        place(&head, as: fork)
        run["id"] = runID
        run["run_number"] = runNumber
        run["run_attempt"] = attempt
        run["name"] = workflow
        run["display_title"] = workflow
        run["head_branch"] = branch
        run["event"] = event
        run["status"] = status
        run["conclusion"] = status == "completed" ? (conclusion ?? "success") : NSNull()
        run["html_url"] = "https://github.com/\(repository)/actions/runs/\(runID)"
        run["created_at"] = GitHubTimestamp.format(start)
        run["run_started_at"] = GitHubTimestamp.format(start)
        run["updated_at"] = GitHubTimestamp.format(start + offset)
        run["repository"] = base
        run["head_repository"] = head
        for field in ["actor", "triggering_actor"] {
            if var user = run[field] as? [String: Any] {
                user["login"] = actor
                run[field] = user
            }
        }
        payload["action"] = action
        payload["workflow_run"] = run
        payload["repository"] = base
        return try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])
    }

    /// The same body decoded, as the daemon's ingress decodes it.
    public func event(_ action: String, at offset: Double = 0, conclusion: String? = nil) throws -> WebhookEvent {
        try WebhookDecoder.decode(
            event: "workflow_run", body: try body(action, at: offset, conclusion: conclusion),
            contentType: "application/json")
    }

    /// A `RunScript` for the same run's jobs (job deliveries carry no head repository).
    public var jobs: RunScript {
        var script = RunScript(runID: runID, runNumber: runNumber, workflow: workflow, branch: branch, start: start)
        script.repository = Repository(
            fullName: repository, htmlURL: "https://github.com/" + repository, defaultBranch: "main")
        script.actor = actor
        script.headRepository = fork
        script.event = event
        return script
    }
}
