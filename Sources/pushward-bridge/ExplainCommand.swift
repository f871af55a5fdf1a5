import BridgeCore
import BridgeDaemon
import BridgeStore
import Foundation

/// `explain RUN_ID` / `explain --delivery ID`: why the card looks as it does, in sentences.
enum ExplainCommand {
    static let help = """
        Usage: pushward-bridge explain RUN_ID [--json] [--config PATH | --database PATH]
               pushward-bridge explain --delivery DELIVERY_ID [--json] [--config PATH | --database PATH]

        Says in sentences why a run's card looks as it does: which card it draws on and whether it
        holds it, where the step shape came from (seeded from an earlier run, or grown live), where
        the widths come from, why a live window was or was not sent, why a visible change did not go
        out as its own update (coalesce window, settle window, the run's level, the hourly cap, the
        budget), how the run ended, what PushWard answered, and why deliveries were ignored. With
        --delivery, what became of one delivery.

        Held changes are worked out by replaying the run's recorded deliveries (while retention
        keeps their payloads) with the configuration's settings: with --database, add --config to
        use them (the defaults stand in otherwise).
        """

    static let spec = CommandSpec(
        name: "explain", valued: ["config", "database", "delivery"], flags: ["json"], help: help
    ) {
        run($0)
    }

    static func run(_ parsed: ParsedArguments) -> ExitCode {
        let json = parsed.flags.contains("json")
        if let id = parsed.options["delivery"] {
            guard parsed.positionals.isEmpty else {
                return CLI.usage("give a RUN_ID or --delivery, not both", help: help)
            }
            return RunsCommand.withDatabase(parsed) { database in
                guard let delivery = try database.delivery(id: id) else {
                    CLI.error("no delivery \(id) recorded")
                    return .failure
                }
                output([RunExplanation.explain(delivery)], json: json)
                return .success
            }
        }
        guard parsed.positionals.count == 1, let runID = Int(parsed.positionals[0]) else {
            return CLI.usage("explain needs one RUN_ID (a number) or --delivery ID", help: help)
        }
        // The settings the run was drawn with: what the held changes are worked out against, so
        // with --database alone (no configuration to read) the defaults stand in for them.
        var settings = ActivitySettings()
        var filter = DeliveryFilter()
        if parsed.options["database"] == nil || parsed.options["config"] != nil,
            case .success(let configuration) = CLI.effectiveConfiguration(path: parsed.options["config"])
        {
            settings = configuration.engineSettings
            filter = configuration.filter
        }
        return RunsCommand.withDatabase(parsed) { database in
            let attempts = try database.runAttempts(runID: runID)
            guard !attempts.isEmpty else {
                CLI.error(try RunsCommand.notRecorded(runID, database))
                return .failure
            }
            let deliveriesMark = try database.retentionMark("deliveries")
            var sentences: [String] = []
            for stored in attempts {
                let activity = try database.session(slug: stored.slug)
                let deliveries = try database.listDeliveries(run: stored.state.key, limit: 1_000, includePayload: true)
                var explained = RunExplanation.sentences(
                    RunExplanation.Facts(
                        run: stored, session: activity?.stored, acknowledged: activity?.acknowledged,
                        requests: try database.requests(for: stored.state.key), deliveries: deliveries,
                        settings: settings,
                        alerts: try database.alerts(
                            repository: stored.state.key.repository, runID: stored.state.key.runID),
                        recovered: try database.recoveryRequests(deliveries.map(\.id)),
                        actions: try database.actions(
                            repository: stored.state.key.repository, runID: stored.state.key.runID),
                        filter: filter
                    ))
                // Right after the sentence that names the run: what follows is read knowing it.
                if let notice = RetentionNotice.prunedDeliveries(
                    stored, remaining: deliveries.count, mark: deliveriesMark)
                {
                    explained.insert(notice, at: min(1, explained.count))
                }
                sentences += explained
            }
            output(sentences, json: json)
            return .success
        }
    }

    /// The sentences quote names from payloads: as text, each is sanitized for the terminal.
    static func output(_ sentences: [String], json: Bool) {
        if json {
            print(JSONValue.array(sentences.map { .string($0) }).canonicalString)
        } else {
            for sentence in sentences { print("• " + TerminalText.sanitized(sentence)) }
        }
    }
}
