import BridgeCore
import Foundation

/// `render FILE… [--config PATH] [--fidelity LEVEL] [--template NAME] [--budget N --used M] [--summary]`: recorded deliveries through the core, no network; prints the
/// PushWard requests it would make, one JSON object per line.
enum RenderCommand {
    static let help = """
        Usage: pushward-bridge render FILE... [--config PATH] [--fidelity LEVEL] [--template steps|generic]
                                      [--budget N [--used M]] [--summary]

        Feeds recorded deliveries through the bridge's core with a simulated clock (driven by the
        payloads' timestamps) and a simulated PushWard that acknowledges everything, and prints each
        request the bridge would make as one JSON object per line:
          {"at": <unix seconds>, "body": {...}, "method": "PATCH", "path": "/activities/gh-..."}

        FILE is a payload named <event>.<anything>.json (workflow_job.completed.json) or a JSON Lines
        file (.jsonl) of {"event", "delivery", "payload"} objects. Earlier runs in the input are
        history for later ones. --config applies the activity settings and filters of a
        configuration file, the push economy among them (fidelity, coalesce, max_updates_per_hour,
        min_update_interval); --fidelity full|steps|milestones overrides its level, to see what a
        level costs before turning it on; --template steps|generic overrides activity.template, to
        see a run as one bar. The configuration's widgets print their requests too (POST /widgets,
        PATCH /widgets/{slug}), after the card's of the same moment. --budget N [--used M] simulates an account with N updates
        a month of which M are spent, resetting just after the input's last delivery: with
        fidelity auto the planner picks each run's level (or no card) from it, and every request
        counts against it. --summary adds, on standard error, the updates (POST + PATCH) each card
        would spend, and each run's budget decision.
        """

    /// The daemon's core as the configuration sets it up: cards, routing (slugs and targets) and
    /// alerts alike.
    static func engine(_ configuration: BridgeConfiguration) -> BridgeEngine {
        let engine = BridgeEngine(
            configuration: EngineConfiguration(
                settings: configuration.activity, filter: configuration.filter, alerts: configuration.alerts,
                actions: configuration.actions, routing: configuration.routing, widgets: configuration.widgets))
        return engine
    }

    static let spec = CommandSpec(
        name: "render", valued: ["config", "fidelity", "template", "budget", "used"], flags: ["summary"],
        help: help
    ) { parsed throws(ExitCode) in try run(parsed) }

    static func run(_ parsed: ParsedArguments) throws(ExitCode) -> ExitCode {
        guard !parsed.positionals.isEmpty else { return CLI.usage("render needs at least one FILE", help: help) }

        var configuration = BridgeConfiguration()
        if let path = parsed.options["config"] {
            configuration = try CLI.loadConfiguration(path: path).get()
        }
        if let level = parsed.options["fidelity"] {
            guard let fidelity = Fidelity(rawValue: level) else {
                let levels = Fidelity.allCases.map(\.rawValue).joined(separator: ", ")
                return CLI.usage("--fidelity must be one of \(levels)", help: help)
            }
            configuration.activity.fidelity = fidelity
        }
        if let name = parsed.options["template"] {
            guard let template = ActivitySettings.Template(rawValue: name) else {
                let names = ActivitySettings.Template.allCases.map(\.rawValue).joined(separator: ", ")
                return CLI.usage("--template must be one of \(names)", help: help)
            }
            configuration.activity.template = template
        }
        let deliveries = try CLI.loadRecordings(parsed.positionals).get()
        var session = RenderSession(
            engine: Self.engine(configuration))
        var events: [WebhookEvent] = []
        for (index, delivery) in deliveries.enumerated() {
            do throws(WebhookDecodingError) {
                events.append(try WebhookDecoder.decode(event: delivery.event, body: delivery.body, contentType: nil))
            } catch {
                CLI.error("delivery \(index + 1) (\(delivery.event)): \(error.description)")
                return .failure
            }
        }
        if let text = parsed.options["budget"] {
            guard let limit = Int(text), limit >= 1, let used = Int(parsed.options["used"] ?? "0"), used >= 0 else {
                return CLI.usage("--budget takes a whole number of updates, --used one of those spent", help: help)
            }
            let last = events.compactMap(PayloadTime.of).max() ?? 0
            session.setBudget(PushBudget(used: used, limit: limit, resetsAt: last + 60))
        } else if parsed.options["used"] != nil {
            return CLI.usage("--used goes with --budget", help: help)
        }
        var output = ""
        var widgetsPrinted = 0
        // A configured widget's requests follow the card's of the same moment, in the same shape.
        func printWidgets() {
            for (at, planned) in session.widgetRequests.dropFirst(widgetsPrinted) {
                let line: JSONValue = [
                    "at": .number(at), "method": .string(planned.request.method.rawValue),
                    "path": .string(planned.request.path), "body": planned.request.body,
                ]
                output += line.canonicalString + "\n"
            }
            widgetsPrinted = session.widgetRequests.count
        }
        for event in events {
            for line in session.feed(event) { output += line.json.canonicalString + "\n" }
            printWidgets()
        }
        for line in session.finish() { output += line.json.canonicalString + "\n" }
        printWidgets()
        FileHandle.standardOutput.write(Data(output.utf8))
        if parsed.flags.contains("summary") {
            var summary = ""
            for slug in session.engine.sessions.keys.sorted() {
                let total = session.engine.sessions[slug]?.totalUpdates ?? 0
                summary += "\(slug): \(total) updates (POST + PATCH)\n"
            }
            for (key, run) in session.engine.runs.sorted(by: { $0.key.runID < $1.key.runID }) {
                guard let decision = run.cardDecision else { continue }
                summary += "run \(key.runID) attempt \(key.attempt): \(decision.level?.rawValue ?? "no card"), "
                summary += "\(run.updatesSpent ?? 0) updates: \(decision.reason)\n"
            }
            FileHandle.standardError.write(Data(summary.utf8))
        }
        return .success
    }
}
