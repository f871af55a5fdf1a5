import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation

/// Strings anyone who can open a pull request can put into a webhook payload (job, workflow and
/// branch names, commit messages, URLs, `head_sha`), each aimed at one way out of where it is
/// printed, and the scripted runs that carry them through a real daemon.
enum HostileInput {
    /// A quote or `<` followed by a combining mark or a ZWJ is one `Character` that is not equal to
    /// `"` or `<`; the rest break out of HTML or URLs in the plain way, or drive a terminal.
    static let strings: [(label: String, text: String)] = [
        ("quote + U+0301", "Build\"\u{301} onload=alert(1) x=\""),
        ("quote + ZWJ", "a\"\u{200D} onmouseover=alert(2) b=\""),
        ("lt + ZWJ", "<\u{200D}img src=x onerror=alert(3)>"),
        ("apostrophe + U+0301", "'\u{301} onfocus=alert(4) '"),
        ("bidi overrides", "\u{202E}evil\u{2066}gnp.exe\u{2069}\u{202D}\u{200F}\u{061C}"),
        ("closing svg, script", "</svg><script>alert(5)</script>"),
        ("img onerror", "\"'><img src=x onerror=alert(6)>"),
        ("javascript URL", "javascript:alert(7)"),
        ("data URL", "data:text/html,<script>alert(8)</script>"),
        ("controls", "nul\u{0}bel\u{7}esc\u{1B}]52;c;aGk=\u{7}up\u{1B}[1A\u{9B}2J\u{7F}tab\tlf\ncr\r"),
    ]

    /// The start of every name of the run carrying `strings[index]`, so a test can tell it reached
    /// the output at all.
    static func marker(_ index: Int) -> String { "hx\(index)q" }

    /// One signed delivery's parts.
    struct Delivery {
        var event: String
        var id: String
        var body: Data
    }

    /// Run ids: `completedRun` finishes (its card ends), `activeRun` stays in progress with a pull
    /// request from a fork, so the page draws both a live and an ended card for each string.
    static func completedRun(_ index: Int) -> Int { 700 + index }
    static func activeRun(_ index: Int) -> Int { 800 + index }

    /// The running run comes from a fork whose name is the string (GitHub's names are plain, but
    /// the name is the payload's word): the page and the CLI print it beside the branch.
    static func forkName(_ index: Int) -> String { "\(marker(index))-fork/\(strings[index].text)" }

    /// Every delivery for every string: a finished run and a running one, each in its own
    /// repository (so each owns its card), plus a `workflow_job` delivery with the string as its
    /// `action`.
    static func deliveries(now: UnixTime) -> [Delivery] {
        var deliveries: [Delivery] = []
        for (index, entry) in strings.enumerated() {
            let hostile = entry.text
            for active in [false, true] {
                let runID = active ? activeRun(index) : completedRun(index)
                // The finished run's repository has a plain URL, so its commit link is an https URL
                // with the hostile `head_sha` in its path; the running one's is the string itself.
                let owner = "\(marker(index))-\(active ? "b" : "a")"
                let repository = Repository(
                    fullName: "\(owner)/\(hostile)", htmlURL: active ? hostile : "https://github.com/\(owner)/repo")
                let start = now - (active ? 120 : 900)
                let run = { (action: String, status: RunStatus, conclusion: String?, offset: Double) in
                    WebhookEvent.workflowRun(
                        WorkflowRunEvent(
                            action: action,
                            run: WorkflowRun(
                                id: runID, runNumber: 1 + index, workflowID: 9, name: "\(marker(index)) wf \(hostile)",
                                displayTitle: hostile, path: ".github/workflows/\(hostile).yml", headBranch: hostile,
                                headSHA: hostile, event: "pull_request", status: status, conclusion: conclusion,
                                htmlURL: hostile, runStartedAt: start, createdAt: start, updatedAt: start + offset,
                                pullRequests: active ? [PullRequestReference(number: 5)] : [],
                                headRepository: active ? forkName(index) : nil),
                            repository: repository))
                }
                let job = {
                    (id: Int, name: String, status: JobStatus, started: Double?, completed: Double?) in
                    WebhookEvent.workflowJob(
                        WorkflowJobEvent(
                            action: status.rawValue,
                            job: WorkflowJob(
                                id: id, runID: runID, name: name, workflowName: "\(marker(index)) wf \(hostile)",
                                headBranch: hostile, headSHA: hostile, status: status,
                                conclusion: completed == nil ? nil : "success", createdAt: start + 2,
                                startedAt: started.map { start + $0 }, completedAt: completed.map { start + $0 },
                                labels: [hostile], runnerName: hostile, htmlURL: hostile),
                            repository: repository))
                }
                let first = runID * 10
                let firstName = "\(marker(index)) \(hostile)"
                let secondName = "\(hostile) \(marker(index))"
                var events = [run("requested", .queued, nil, 0), run("in_progress", .inProgress, nil, 1)]
                events.append(job(first, firstName, .queued, nil, nil))
                events.append(job(first, firstName, .inProgress, 4, nil))
                if active {
                    events.append(job(first + 1, secondName, .queued, nil, nil))
                } else {
                    events.append(job(first, firstName, .completed, 4, 40))
                    events.append(job(first + 1, secondName, .queued, nil, nil))
                    events.append(job(first + 1, secondName, .inProgress, 42, nil))
                    events.append(job(first + 1, secondName, .completed, 42, 80))
                    events.append(run("completed", .completed, "success", 82))
                }
                for (number, event) in events.enumerated() {
                    let (name, body) = PayloadEncoder.encode(event)
                    deliveries.append(
                        Delivery(event: name, id: "\(marker(index))-\(runID)-\(number)", body: decorated(body, hostile))
                    )
                }
                if !active {
                    // A job delivery whose action is the string: recorded, then ignored or rejected.
                    let (name, body) = PayloadEncoder.encode(job(first + 2, firstName, .queued, nil, nil))
                    var object = (try? JSONValue(parsing: body))?.objectValue ?? [:]
                    object["action"] = .string(hostile)
                    deliveries.append(
                        Delivery(
                            event: name, id: "\(marker(index))-\(runID)-action",
                            body: JSONValue.object(object).canonicalData))
                }
            }
        }
        return deliveries
    }

    /// Delivers everything to `admin` and waits until every card is drawn: the finished runs'
    /// ended, the running ones' acknowledged.
    static func fill(_ admin: AdminAPITests.Admin) async throws {
        for delivery in deliveries(now: Date().timeIntervalSince1970) {
            _ = try await admin.deliver(event: delivery.event, id: delivery.id, body: delivery.body)
        }
        let path = admin.databasePath
        let count = strings.count
        let drawn = try await eventually(timeout: 20) {
            let database = try BridgeDatabase(path: path, readOnly: true)
            let runs = try database.listRuns(limit: 100)
            guard runs.count == 2 * count else { return false }
            return try runs.allSatisfy { run in
                // More runs are live than PushWard's five cards per person: those without a slot are
                // counted on the summary card (whose content carries the newest one's names) or,
                // finished meanwhile, never drawn; each says so in its placement.
                if let place = try database.storedRun(run.key)?.state.placement?.place, place != .card {
                    return true
                }
                guard let card = try database.session(slug: run.slug), card.acknowledged != nil else { return false }
                return run.key.runID >= 800 || card.stored.session.phase == .ended
            }
        }
        if !drawn { throw TestFailure("the hostile runs' cards were never all drawn") }
    }

    /// The body with what GitHub sends besides the fields the decoder reads, all set to the
    /// string: the commit message, the actor and the sender. They are kept with the delivery.
    static func decorated(_ body: Data, _ hostile: String) -> Data {
        guard var object = (try? JSONValue(parsing: body))?.objectValue else { return body }
        let person: JSONValue = ["login": .string(hostile), "html_url": .string(hostile)]
        object["sender"] = person
        for key in ["workflow_run", "workflow_job"] {
            guard var inner = object[key]?.objectValue else { continue }
            inner["actor"] = person
            inner["triggering_actor"] = person
            inner["head_commit"] = ["id": .string(hostile), "message": .string(hostile), "author": person]
            object[key] = .object(inner)
        }
        return JSONValue.object(object).canonicalData
    }
}
