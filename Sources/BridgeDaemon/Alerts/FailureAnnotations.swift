import BridgeCore
import BridgeStore
import Foundation
import GitHubClient
import HTTPClientSupport

/// With `github.api`: a failure alert quotes the error GitHub annotated on the failed job
/// (`AnnotationQuote`), read with one `GET …/check-runs/{id}/annotations` as the alert goes out,
/// through the leader fence's gate. The card never waits for it (cards and alerts are sent apart),
/// and an alert whose read fails, or finds nothing worth quoting, goes as it was planned. Held by
/// the dispatcher.
public struct FailureAnnotations: Sendable {
    let service: BridgeService
    /// The GitHub call: the annotations of a check run of a repository, through a gate.
    let lookup: @Sendable (_ repository: String, _ checkRunID: Int, _ gate: SendGate?) async throws -> [JSONValue]
    let fence: LeaderFence
    let log: Logger

    public init(service: BridgeService, client: GitHubAPIClient, fence: LeaderFence, logger: Logger) {
        self.service = service
        lookup = { repository, id, gate in
            try await client.checkRunAnnotations(repository: repository, checkRunID: id, gate: gate)
        }
        self.fence = fence
        log = logger
    }

    /// `alert` with its body quoting the failed job's first annotation, when it is a failure alert
    /// whose run the service still holds and GitHub names an error worth quoting.
    func annotated(_ alert: AlertRecord) async -> AlertRecord {
        guard alert.reason == .failure,
            var body = (try? JSONValue(parsing: Data(alert.body.utf8)))?.objectValue,
            let jobID = await service.read({ _, engine in
                engine.runs[alert.run].flatMap { FailureSummary.of(StepPlanner.plan(for: $0))?.jobID }
            })
        else { return alert }
        let annotations: [JSONValue]
        do {
            annotations = try await lookup(alert.run.repository, jobID, fence.gate())
        } catch {
            log.info(
                "could not read the failed job's annotations; the alert goes without its error",
                ["run": .string(alert.run.description), "error": .string("\(error)")])
            return alert
        }
        guard let quote = AnnotationQuote.first(of: annotations) else { return alert }
        let planned = body["body"]?.stringValue ?? ""
        body["body"] = .string(
            CardText.clamp(planned.isEmpty ? quote : planned + "\n" + quote, to: AlertContent.bodyLimit))
        var quoted = alert
        quoted.body = JSONValue.object(body).canonicalString
        return quoted
    }
}
