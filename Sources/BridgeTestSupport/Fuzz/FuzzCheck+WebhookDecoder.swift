import BridgeCore
import Foundation

extension FuzzCheck {
    /// The event headers the decoder target chooses from: the three the bridge reads and one it
    /// must ignore without looking at the body.
    static let decoderEvents = ["workflow_run", "workflow_job", "ping", "check_run"]

    /// `WebhookDecoder.decode` on an arbitrary delivery: it must not crash, a decoded event must
    /// be the kind the header names with values in sane ranges, and a body sent form-encoded must
    /// decode exactly as the same body sent as JSON (GitHub offers both, and a hook can switch).
    ///
    /// Input: the first byte picks the event (bits 0–1) and how the rest is delivered (bits 2–4):
    /// 0 JSON, 1 form-encoded as `payload=`, 2 JSON with no content type, 3 form-encoded with no
    /// content type, 4 JSON under a media type with parameters and odd case, 5 the rest as a raw
    /// form body, 6 an unsupported content type, 7 the rest as a raw body with no content type.
    public static func webhookDecoder(_ input: [UInt8]) throws(FuzzFinding) {
        var reader = FuzzBytes(input)
        let selector = reader.byte()
        let event = decoderEvents[Int(selector & 0b11)]
        let payload = Data(reader.rest())
        let mode = (selector >> 2) & 0b111
        let body: Data
        let contentType: String?
        switch mode {
        case 0: (body, contentType) = (payload, "application/json")
        case 1: (body, contentType) = (GitHubForm.encoded(payload), "application/x-www-form-urlencoded")
        case 2: (body, contentType) = (payload, nil)
        case 3: (body, contentType) = (GitHubForm.encoded(payload), nil)
        case 4: (body, contentType) = (payload, " Application/JSON ; charset=utf-8")
        case 5: (body, contentType) = (payload, "application/x-www-form-urlencoded; charset=utf-8")
        case 6: (body, contentType) = (payload, "text/plain")
        default: (body, contentType) = (payload, nil)
        }

        let outcome = decodeOutcome(event: event, body: body, contentType: contentType)
        if mode == 1 || mode == 3 {
            // The form only wraps the JSON: the outcome, errors included, must be the JSON's.
            let direct = decodeOutcome(event: event, body: payload, contentType: "application/json")
            guard outcome == direct else {
                throw FuzzFinding("form-encoded body decodes to \(outcome), the same JSON to \(direct)")
            }
        }
        // An empty body is reported as such before the content type is looked at.
        if mode == 6, event != "check_run", outcome != .failure(.unsupportedContentType("text/plain")),
            outcome != .failure(.emptyBody)
        {
            throw FuzzFinding("text/plain body was not refused as an unsupported content type: \(outcome)")
        }
        guard case .success(let decoded) = outcome else { return }
        try checkSaneEvent(decoded, header: event)
    }

    private static func decodeOutcome(
        event: String, body: Data, contentType: String?
    ) -> Result<WebhookEvent, WebhookDecodingError> {
        Result { () throws(WebhookDecodingError) in
            try WebhookDecoder.decode(event: event, body: body, contentType: contentType)
        }
    }

    /// The values a decoded event may hold: ids, attempts and numbers are whole numbers from 1 to
    /// 2^53 − 1 (what the decoder promises: GitHub's ids are JavaScript-safe integers, and no
    /// arithmetic on them can overflow), and a timestamp is a finite time in the years 1–9999
    /// (what an ISO 8601 date can write).
    private static func checkSaneEvent(_ event: WebhookEvent, header: String) throws(FuzzFinding) {
        switch (header, event) {
        case ("workflow_run", .workflowRun(let payload)):
            let run = payload.run
            try checkIdentifier(run.id, "workflow_run.id")
            try checkIdentifier(run.runAttempt, "workflow_run.run_attempt")
            try checkIdentifier(run.runNumber, "workflow_run.run_number")
            try checkIdentifier(run.workflowID, "workflow_run.workflow_id")
            for (index, pullRequest) in run.pullRequests.enumerated() {
                try checkIdentifier(pullRequest.number, "workflow_run.pull_requests[\(index)].number")
            }
            for (field, time) in [
                ("run_started_at", run.runStartedAt), ("created_at", run.createdAt), ("updated_at", run.updatedAt),
            ] {
                try checkTime(time, "workflow_run." + field)
            }
            try checkRepository(payload.repository)
        case ("workflow_job", .workflowJob(let payload)):
            let job = payload.job
            try checkIdentifier(job.id, "workflow_job.id")
            try checkIdentifier(job.runID, "workflow_job.run_id")
            try checkIdentifier(job.runAttempt, "workflow_job.run_attempt")
            for (field, time) in [
                ("created_at", job.createdAt), ("started_at", job.startedAt), ("completed_at", job.completedAt),
            ] {
                try checkTime(time, "workflow_job." + field)
            }
            for (index, step) in job.steps.enumerated() {
                try checkTime(step.startedAt, "workflow_job.steps[\(index)].started_at")
                try checkTime(step.completedAt, "workflow_job.steps[\(index)].completed_at")
            }
            try checkRepository(payload.repository)
        case ("ping", .ping(let payload)):
            try checkIdentifier(payload.hookID, "ping hook_id")
            if let repository = payload.repository { try checkRepository(repository) }
        case ("check_run", .unsupported(let name)):
            try require(name == header, "unsupported event named \(name), header \(header)")
        default:
            throw FuzzFinding("header \(header) decoded as \(event)")
        }
    }

    private static func checkIdentifier(_ value: Int?, _ field: String) throws(FuzzFinding) {
        guard let value else { return }
        try require((1...9_007_199_254_740_991).contains(value), "\(field) is \(value)")
    }

    private static func checkTime(_ time: UnixTime?, _ field: String) throws(FuzzFinding) {
        guard let time else { return }
        try require(time.isFinite && time >= -62_135_596_800 && time < 253_402_300_800, "\(field) is \(time)")
    }

    private static func checkRepository(_ repository: Repository) throws(FuzzFinding) {
        try require(!repository.fullName.isEmpty, "repository with an empty full name")
    }

    static func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFinding) {
        if !condition { throw FuzzFinding(message()) }
    }
}
