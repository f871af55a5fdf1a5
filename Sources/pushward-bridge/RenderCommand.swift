import BridgeCore
import Foundation

/// `render FILE… [--config PATH] [--fidelity LEVEL] [--summary]`: recorded deliveries through the core, no network; prints the
/// PushWard requests it would make, one JSON object per line.
enum RenderCommand {
    static let help = """
        Usage: pushward-bridge render FILE... [--config PATH] [--fidelity LEVEL] [--summary]

        Feeds recorded deliveries through the bridge's core with a simulated clock (driven by the
        payloads' timestamps) and a simulated PushWard that acknowledges everything, and prints each
        request the bridge would make as one JSON object per line:
          {"at": <unix seconds>, "body": {...}, "method": "PATCH", "path": "/activities/gh-..."}

        FILE is a payload named <event>.<anything>.json (workflow_job.completed.json) or a JSON Lines
        file (.jsonl) of {"event", "delivery", "payload"} objects. Earlier runs in the input are
        history for later ones. --config applies the activity settings and filters of a
        configuration file, the push economy among them (fidelity, coalesce, max_updates_per_hour,
        min_update_interval); --fidelity full|steps|milestones overrides its level, to see what a
        level costs before turning it on. --summary adds, on standard error, the updates (POST +
        PATCH) each card would spend.
        """

    static func run(_ arguments: [String]) -> ExitCode {
        let parsed: ParsedArguments
        switch CLI.parse(arguments, valued: ["config", "fidelity"], flags: ["summary"], help: help) {
        case .success(let value): parsed = value
        case .failure(let code): return code
        }
        guard !parsed.positionals.isEmpty else { return CLI.usage("render needs at least one FILE", help: help) }

        var configuration = BridgeConfiguration()
        if let path = parsed.options["config"] {
            switch CLI.loadConfiguration(path: path) {
            case .success(let loaded): configuration = loaded
            case .failure(let code): return code
            }
        }
        if let level = parsed.options["fidelity"] {
            guard let fidelity = Fidelity(rawValue: level) else {
                let levels = Fidelity.allCases.map(\.rawValue).joined(separator: ", ")
                return CLI.usage("--fidelity must be one of \(levels)", help: help)
            }
            configuration.activity.fidelity = fidelity
        }
        let deliveries: [RecordedDelivery]
        switch CLI.loadRecordings(parsed.positionals) {
        case .success(let loaded): deliveries = loaded
        case .failure(let code): return code
        }
        var session = RenderSession(
            engine: BridgeEngine(settings: configuration.activity, filter: configuration.filter))
        var output = ""
        for (index, delivery) in deliveries.enumerated() {
            let event: WebhookEvent
            do throws(WebhookDecodingError) {
                event = try WebhookDecoder.decode(event: delivery.event, body: delivery.body, contentType: nil)
            } catch {
                CLI.error("delivery \(index + 1) (\(delivery.event)): \(error.description)")
                return .failure
            }
            for line in session.feed(event) { output += line.json.canonicalString + "\n" }
        }
        for line in session.finish() { output += line.json.canonicalString + "\n" }
        FileHandle.standardOutput.write(Data(output.utf8))
        if parsed.flags.contains("summary") {
            var summary = ""
            for slug in session.engine.sessions.keys.sorted() {
                let total = session.engine.sessions[slug]?.totalUpdates ?? 0
                summary += "\(slug): \(total) updates (POST + PATCH)\n"
            }
            FileHandle.standardError.write(Data(summary.utf8))
        }
        return .success
    }
}
