import BridgeCore
import BridgeDaemon
import BridgeStore
import Foundation

/// `deliveries list` and `deliveries show ID`: what arrived, when, and what became of it.
enum DeliveriesCommand {
    static let help = """
        Usage: pushward-bridge deliveries list [--limit N] [--json] [--config PATH | --database PATH]
               pushward-bridge deliveries show DELIVERY_ID [--json] [--config PATH | --database PATH]

        Each delivery's outcome: applied, ignored (and why), rejected (and why), and how many times
        GitHub delivered it again. `show` includes the payload while retention keeps it.
        """

    static let spec = CommandSpec(
        name: "deliveries", subcommands: ["list", "show"], valued: ["config", "database", "limit"], flags: ["json"],
        help: help
    ) { run($0) }

    static func run(_ parsed: ParsedArguments) -> ExitCode {
        guard let subcommand = parsed.positionals.first else {
            return CLI.usage("deliveries needs list or show", help: help)
        }
        let json = parsed.flags.contains("json")
        switch subcommand {
        case "list":
            var limit = 50
            if let text = parsed.options["limit"] {
                guard let value = Int(text), value > 0 else {
                    return CLI.usage("--limit takes a positive number", help: help)
                }
                limit = value
            }
            return RunsCommand.withDatabase(parsed) { database in
                let deliveries = try database.listDeliveries(limit: limit)
                if json {
                    print(JSONValue.array(deliveries.map { document($0, payload: false) }).canonicalString)
                } else if deliveries.isEmpty {
                    print("no deliveries recorded yet")
                } else {
                    let rows = deliveries.map { delivery in
                        [
                            DatabaseAccess.time(delivery.receivedAt), delivery.id,
                            delivery.event + (delivery.action.map { ".\($0)" } ?? ""), delivery.repository ?? "-",
                            delivery.runID.map { "\($0)/\(delivery.runAttempt ?? 1)" } ?? "-",
                            delivery.outcome.rawValue + (delivery.reason.map { ": \($0)" } ?? "")
                                + (delivery.duplicates > 0 ? " (+\(delivery.duplicates) duplicates)" : ""),
                        ]
                    }
                    print(
                        Table.render(
                            header: ["RECEIVED", "DELIVERY", "EVENT", "REPOSITORY", "RUN", "OUTCOME"], rows: rows))
                }
                return .success
            }
        case "show":
            guard parsed.positionals.count == 2 else {
                return CLI.usage("deliveries show needs one DELIVERY_ID", help: help)
            }
            let id = parsed.positionals[1]
            return RunsCommand.withDatabase(parsed) { database in
                guard let delivery = try database.delivery(id: id) else {
                    CLI.error("no delivery \(id) recorded")
                    return .failure
                }
                let value = document(delivery, payload: true)
                if json {
                    print(value.canonicalString)
                } else {
                    for key in [
                        "id", "event", "action", "received_at", "repository", "run_id", "run_attempt", "outcome",
                        "reason", "duplicates", "payload_bytes",
                    ] {
                        print("\(key): \(TerminalText.sanitized(value[key].map(describe) ?? "-"))")
                    }
                    print("payload: \(delivery.payload == nil ? "(past retention)" : "kept (use --json to see it)")")
                }
                return .success
            }
        default:
            return CLI.usage("unknown deliveries command \(subcommand)", help: help)
        }
    }

    static func describe(_ value: JSONValue) -> String {
        if let text = value.stringValue { return text }
        if value.isNull { return "-" }
        return value.canonicalString
    }

    static func document(_ delivery: DeliveryRecord, payload: Bool) -> JSONValue {
        DeliveryDocument.json(delivery, payload: payload)
    }
}
