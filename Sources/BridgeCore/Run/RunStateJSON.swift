import Foundation

/// The run state as the store keeps it, written field by field instead of through `Encodable`.
///
/// Every group commit writes each run it touched; through `Encodable` that was about a fifth of
/// the store queue's time, nearly all of it the protocol's dynamic dispatch for some sixty fields;
/// this writes the same text about 18 times as fast (`dispatch-bench --stored-json`, the figures
/// in `JSONByteBuffer`'s comment).
/// The text is the document `JSONEncoder` writes for the same value (keys in declaration order,
/// `nil` left out, dictionaries sorted by key), and it is read back with `JSONDecoder` like any
/// other stored value. `RunStateRoundTripTests` fails when a stored property is added without
/// being written here.
public enum RunStateJSON {
    /// The JSON text, or nil when a number in the state is not finite (JSON has no NaN): the
    /// caller then encodes it generically, which reports where.
    public static func text(of state: RunState) -> String? {
        var output = JSONByteBuffer(capacity: 2_048)
        guard write(state, to: &output) else { return nil }
        return output.string
    }

    private static func write(_ state: RunState, to out: inout JSONByteBuffer) -> Bool {
        out.append(UInt8(ascii: "{"))
        var object = JSONObjectWriter()
        object.key("key", &out)
        write(state.key, to: &out)
        object.key("repository", &out)
        out.append(UInt8(ascii: "{"))
        var repository = JSONObjectWriter()
        repository.string("fullName", state.repository.fullName, &out)
        repository.string("htmlURL", state.repository.htmlURL, &out)
        repository.string("defaultBranch", state.repository.defaultBranch, &out)
        out.append(UInt8(ascii: "}"))
        if let run = state.run {
            object.key("run", &out)
            guard write(run, to: &out) else { return false }
        }
        object.key("jobs", &out)
        out.append(UInt8(ascii: "{"))
        var jobs = JSONObjectWriter()
        for id in state.jobs.keys.sorted() {
            jobs.key(String(id), &out)
            guard write(state.jobs[id]!, to: &out) else { return false }
        }
        out.append(UInt8(ascii: "}"))
        if let metadata = state.jobMetadata {
            object.key("jobMetadata", &out)
            out.append(UInt8(ascii: "{"))
            var fields = JSONObjectWriter()
            fields.integer("sourceJobID", metadata.sourceJobID, &out)
            fields.string("workflowName", metadata.workflowName, &out)
            fields.string("headBranch", metadata.headBranch, &out)
            fields.string("headSHA", metadata.headSHA, &out)
            fields.string("sender", metadata.sender, &out)
            out.append(UInt8(ascii: "}"))
        }
        if let seed = state.seed {
            object.key("seed", &out)
            guard write(seed, to: &out) else { return false }
        }
        object.key("estimates", &out)
        out.append(UInt8(ascii: "{"))
        var estimates = JSONObjectWriter()
        for name in state.estimates.keys.sorted() {
            guard estimates.number(name, state.estimates[name]!, &out) else { return false }
        }
        out.append(UInt8(ascii: "}"))
        object.bool("historyResolved", state.historyResolved, &out)
        object.key("inherited", &out)
        out.append(UInt8(ascii: "["))
        for (index, group) in state.inherited.enumerated() {
            if index > 0 { out.append(JSONByteBuffer.comma) }
            out.append(UInt8(ascii: "{"))
            var fields = JSONObjectWriter()
            fields.string("name", group.name, &out)
            fields.integer("orderKey", group.orderKey, &out)
            fields.integer("jobCount", group.jobCount, &out)
            fields.bool("succeeded", group.succeeded, &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        if let failed = state.failedBefore {
            object.key("failedBefore", &out)
            out.append(UInt8(ascii: "["))
            for (index, name) in failed.enumerated() {
                if index > 0 { out.append(JSONByteBuffer.comma) }
                out.appendString(name)
            }
            out.append(UInt8(ascii: "]"))
        }
        guard object.number("firstSeenAt", state.firstSeenAt, &out),
            object.number("lastChangeAt", state.lastChangeAt, &out)
        else { return false }
        if let completion = state.completion {
            object.key("completion", &out)
            out.append(UInt8(ascii: "{"))
            var fields = JSONObjectWriter()
            fields.string("conclusion", completion.conclusion, &out)
            guard fields.number("recognizedAt", completion.recognizedAt, &out) else { return false }
            fields.string("source", completion.source.rawValue, &out)
            out.append(UInt8(ascii: "}"))
        }
        object.integer("updatesSpent", state.updatesSpent, &out)
        if let decision = state.cardDecision {
            object.key("cardDecision", &out)
            out.append(UInt8(ascii: "{"))
            var fields = JSONObjectWriter()
            fields.string("level", decision.level?.rawValue, &out)
            fields.string("reason", decision.reason, &out)
            guard fields.number("decidedAt", decision.decidedAt, &out),
                fields.number("forecastRuns", decision.forecastRuns, &out)
            else { return false }
            fields.integer("remaining", decision.remaining, &out)
            out.append(UInt8(ascii: "}"))
        }
        if let note = state.actionNote {
            object.key("actionNote", &out)
            out.append(UInt8(ascii: "{"))
            var fields = JSONObjectWriter()
            fields.string("kind", note.kind.rawValue, &out)
            fields.string("text", note.text, &out)
            fields.bool("failed", note.failed, &out)
            guard fields.number("at", note.at, &out) else { return false }
            out.append(UInt8(ascii: "}"))
        }
        if let placement = state.placement {
            object.key("placement", &out)
            out.append(UInt8(ascii: "{"))
            var fields = JSONObjectWriter()
            fields.string("place", placement.place.rawValue, &out)
            guard fields.number("since", placement.since, &out) else { return false }
            fields.integer("rank", placement.rank.rawValue, &out)
            guard fields.number("cardAt", placement.cardAt, &out),
                fields.number("summaryAt", placement.summaryAt, &out),
                fields.number("preemptedAt", placement.preemptedAt, &out)
            else { return false }
            fields.integer("preemptions", placement.preemptions, &out)
            guard fields.number("restartedAt", placement.restartedAt, &out) else { return false }
            out.append(UInt8(ascii: "}"))
        }
        if let wait = state.runnerWait {
            object.key("runnerWait", &out)
            out.append(UInt8(ascii: "{"))
            var fields = JSONObjectWriter()
            fields.integer("jobID", wait.jobID, &out)
            fields.string("job", wait.job, &out)
            guard fields.number("since", wait.since, &out) else { return false }
            fields.key("labels", &out)
            writeStrings(wait.labels, to: &out)
            guard fields.number("noticedAt", wait.noticedAt, &out) else { return false }
            out.append(UInt8(ascii: "}"))
        }
        guard object.number("queuedAlertAt", state.queuedAlertAt, &out) else { return false }
        out.append(UInt8(ascii: "}"))
        return true
    }

    /// A JSON array of strings.
    static func writeStrings(_ strings: [String], to out: inout JSONByteBuffer) {
        out.append(UInt8(ascii: "["))
        for (index, string) in strings.enumerated() {
            if index > 0 { out.append(JSONByteBuffer.comma) }
            out.appendString(string)
        }
        out.append(UInt8(ascii: "]"))
    }

    static func write(_ key: RunKey, to out: inout JSONByteBuffer) {
        out.append(UInt8(ascii: "{"))
        var fields = JSONObjectWriter()
        fields.string("repository", key.repository, &out)
        fields.integer("runID", key.runID, &out)
        fields.integer("attempt", key.attempt, &out)
        out.append(UInt8(ascii: "}"))
    }

    private static func write(_ run: WorkflowRun, to out: inout JSONByteBuffer) -> Bool {
        out.append(UInt8(ascii: "{"))
        var fields = JSONObjectWriter()
        fields.integer("id", run.id, &out)
        fields.integer("runAttempt", run.runAttempt, &out)
        fields.integer("runNumber", run.runNumber, &out)
        fields.integer("workflowID", run.workflowID, &out)
        fields.string("name", run.name, &out)
        fields.string("displayTitle", run.displayTitle, &out)
        fields.string("path", run.path, &out)
        fields.string("headBranch", run.headBranch, &out)
        fields.string("headSHA", run.headSHA, &out)
        fields.string("event", run.event, &out)
        fields.string("status", run.status.rawValue, &out)
        fields.string("conclusion", run.conclusion, &out)
        fields.string("htmlURL", run.htmlURL, &out)
        guard fields.number("runStartedAt", run.runStartedAt, &out),
            fields.number("createdAt", run.createdAt, &out),
            fields.number("updatedAt", run.updatedAt, &out)
        else { return false }
        fields.key("pullRequests", &out)
        out.append(UInt8(ascii: "["))
        for (index, pullRequest) in run.pullRequests.enumerated() {
            if index > 0 { out.append(JSONByteBuffer.comma) }
            out.append(UInt8(ascii: "{"))
            var reference = JSONObjectWriter()
            reference.integer("number", pullRequest.number, &out)
            reference.string("htmlURL", pullRequest.htmlURL, &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        fields.string("actor", run.actor, &out)
        fields.string("triggeringActor", run.triggeringActor, &out)
        fields.string("commitTitle", run.commitTitle, &out)
        fields.string("headRepository", run.headRepository, &out)
        fields.integer("headRepositoryID", run.headRepositoryID, &out)
        out.append(UInt8(ascii: "}"))
        return true
    }

    private static func write(_ job: JobRecord, to out: inout JSONByteBuffer) -> Bool {
        out.append(UInt8(ascii: "{"))
        var fields = JSONObjectWriter()
        fields.integer("id", job.id, &out)
        fields.string("name", job.name, &out)
        fields.string("status", job.status.rawValue, &out)
        fields.string("conclusion", job.conclusion, &out)
        guard fields.number("createdAt", job.createdAt, &out), fields.number("startedAt", job.startedAt, &out),
            fields.number("completedAt", job.completedAt, &out)
        else { return false }
        fields.string("waitingEnvironment", job.waitingEnvironment, &out)
        fields.bool("isCheckRun", job.isCheckRun, &out)
        fields.string("htmlURL", job.htmlURL, &out)
        fields.string("failedStep", job.failedStep, &out)
        fields.string("deploymentEnvironment", job.deploymentEnvironment, &out)
        if let labels = job.labels {
            fields.key("labels", &out)
            writeStrings(labels, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return true
    }

    private static func write(_ summary: RunSummary, to out: inout JSONByteBuffer) -> Bool {
        out.append(UInt8(ascii: "{"))
        var fields = JSONObjectWriter()
        fields.key("key", &out)
        write(summary.key, to: &out)
        fields.string("workflow", summary.workflow, &out)
        fields.string("branch", summary.branch, &out)
        fields.string("conclusion", summary.conclusion, &out)
        guard fields.number("finishedAt", summary.finishedAt, &out) else { return false }
        fields.key("groups", &out)
        out.append(UInt8(ascii: "["))
        for (index, group) in summary.groups.enumerated() {
            if index > 0 { out.append(JSONByteBuffer.comma) }
            out.append(UInt8(ascii: "{"))
            var members = JSONObjectWriter()
            members.string("name", group.name, &out)
            members.integer("jobCount", group.jobCount, &out)
            guard members.number("duration", group.duration, &out) else { return false }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        out.append(UInt8(ascii: "}"))
        return true
    }
}
