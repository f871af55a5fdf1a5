import BridgeCore
import BridgeStore
import Foundation

/// `runs list` and `runs show RUN_ID`: which run drives which card, and what was sent.
enum RunsCommand {
    static let help = """
        Usage: pushward-bridge runs list [--repo OWNER/NAME] [--limit N] [--json] [--config PATH | --database PATH]
               pushward-bridge runs show RUN_ID [--json] [--config PATH | --database PATH]

        list: recent runs, those in progress first: activity slug, attempt, status, last push.
        show: one run (every attempt): its jobs, the step plan, the card's desired vs acknowledged
        content, and the requests sent for it. Reads the database; safe while the daemon runs.
        """

    static func run(_ arguments: [String]) -> ExitCode {
        let parsed: ParsedArguments
        do throws(UsageError) {
            parsed = try ParsedArguments(
                arguments, valued: ["config", "database", "repo", "limit"], flags: ["help", "json"])
        } catch {
            return CLI.usage(error.description, help: help)
        }
        if parsed.flags.contains("help") {
            print(help)
            return .success
        }
        guard let subcommand = parsed.positionals.first else { return CLI.usage("runs needs list or show", help: help) }
        var limit = 20
        if let text = parsed.options["limit"] {
            guard let value = Int(text), value > 0 else {
                return CLI.usage("--limit takes a positive number", help: help)
            }
            limit = value
        }
        switch subcommand {
        case "list":
            guard parsed.positionals.count == 1 else { return CLI.usage("runs list takes no arguments", help: help) }
            return withDatabase(parsed) { database in
                try list(
                    database, repository: parsed.options["repo"], limit: limit, json: parsed.flags.contains("json"))
            }
        case "show":
            guard parsed.positionals.count == 2, let runID = Int(parsed.positionals[1]) else {
                return CLI.usage("runs show needs one RUN_ID (a number)", help: help)
            }
            return withDatabase(parsed) { database in
                try show(database, runID: runID, json: parsed.flags.contains("json"))
            }
        default:
            return CLI.usage("unknown runs command \(subcommand)", help: help)
        }
    }

    static func withDatabase(_ parsed: ParsedArguments, _ body: (BridgeDatabase) throws -> ExitCode) -> ExitCode {
        switch DatabaseAccess.open(parsed) {
        case .failure(let code): return code
        case .success(let database):
            do {
                return try body(database)
            } catch {
                CLI.error("reading the database failed: \(error)")
                return .failure
            }
        }
    }

    static func list(_ database: BridgeDatabase, repository: String?, limit: Int, json: Bool) throws -> ExitCode {
        let runs = try database.listRuns(repository: repository, limit: limit)
        if json {
            let values: [JSONValue] = runs.map { run in
                [
                    "repository": .string(run.key.repository), "run_id": .number(Double(run.key.runID)),
                    "attempt": .number(Double(run.key.attempt)), "workflow": run.workflow.map { .string($0) } ?? .null,
                    "branch": run.branch.map { .string($0) } ?? .null, "status": .string(run.status),
                    "conclusion": run.conclusion.map { .string($0) } ?? .null, "slug": .string(run.slug),
                    "owns_card": .bool(run.ownsCard), "updated_at": .number(run.updatedAt),
                    "last_push_at": run.lastPushAt.map { .number($0) } ?? .null,
                ]
            }
            print(JSONValue.array(values).canonicalString)
            return .success
        }
        guard !runs.isEmpty else {
            print("no runs recorded yet")
            return .success
        }
        let header = ["RUN", "ATTEMPT", "REPOSITORY", "WORKFLOW", "BRANCH", "STATUS", "SLUG", "LAST PUSH"]
        let rows = runs.map { run in
            [
                String(run.key.runID), String(run.key.attempt), run.key.repository, run.workflow ?? "-",
                run.branch ?? "-",
                run.status + (run.conclusion.map { " (\($0))" } ?? "") + (run.ownsCard ? " *" : ""),
                run.slug, DatabaseAccess.time(run.lastPushAt),
            ]
        }
        print(Table.render(header: header, rows: rows))
        print("* holds its card now")
        return .success
    }

    static func show(_ database: BridgeDatabase, runID: Int, json: Bool) throws -> ExitCode {
        let attempts = try database.runAttempts(runID: runID)
        guard !attempts.isEmpty else {
            CLI.error("no run \(runID) recorded")
            return .failure
        }
        var documents: [JSONValue] = []
        var text = ""
        for stored in attempts {
            let state = stored.state
            let plan = StepPlanner.plan(for: state)
            let card = try database.card(slug: stored.slug)
            let ownsCard = card?.card.session.owner == state.key
            let pushes = try database.pushes(for: state.key)
            let deliveries = try database.listDeliveries(run: state.key, limit: 500)
            let desired = ownsCard ? card?.card.desired : nil
            let acknowledged = ownsCard ? card?.acknowledged : nil
            documents.append([
                "repository": .string(state.key.repository), "run_id": .number(Double(state.key.runID)),
                "attempt": .number(Double(state.key.attempt)),
                "workflow": state.workflowName.map { .string($0) } ?? .null,
                "branch": state.headBranch.map { .string($0) } ?? .null, "status": .string(stored.status),
                "conclusion": state.completion.map { .string($0.conclusion) } ?? .null, "slug": .string(stored.slug),
                "owns_card": .bool(ownsCard),
                "phase": ownsCard ? card.map { .string($0.card.session.phase.rawValue) } ?? .null : .null,
                "steps": .array(
                    plan.groups.map { group in
                        [
                            "name": .string(group.name), "origin": .string(group.origin.rawValue),
                            "jobs": .number(Double(group.totalJobCount)),
                            "finished": .number(Double(group.finishedJobCount)),
                            "estimate": group.estimate.map { .number($0) } ?? .null,
                        ]
                    }),
                "jobs": .array(
                    state.workflowJobs.map { job in
                        [
                            "id": .number(Double(job.id)), "name": .string(job.name),
                            "status": .string(job.status.rawValue),
                            "conclusion": job.conclusion.map { .string($0) } ?? .null,
                        ]
                    }),
                "desired": desired ?? .null, "acknowledged": acknowledged ?? .null,
                "deliveries": .array(
                    deliveries.map { delivery in
                        [
                            "id": .string(delivery.id), "event": .string(delivery.event),
                            "action": delivery.action.map { .string($0) } ?? .null,
                            "received_at": .number(delivery.receivedAt), "outcome": .string(delivery.outcome.rawValue),
                        ]
                    }),
                "pushes": .array(
                    pushes.map { push in
                        [
                            "kind": .string(push.kind), "method": .string(push.method), "path": .string(push.path),
                            "sent_at": .number(push.sentAt), "status": push.status.map { .number(Double($0)) } ?? .null,
                            "outcome": .string(push.outcome),
                            "body": (try? JSONValue(parsing: Data(push.body.utf8))) ?? .null,
                        ]
                    }),
            ])
            text += describe(
                stored, plan: plan, ownsCard: ownsCard, desired: desired, acknowledged: acknowledged,
                deliveries: deliveries, pushes: pushes)
        }
        if json {
            print(JSONValue.array(documents).canonicalString)
        } else {
            print(text, terminator: "")
        }
        return .success
    }

    static func describe(
        _ stored: StoredRun, plan: StepPlan, ownsCard: Bool, desired: JSONValue?, acknowledged: JSONValue?,
        deliveries: [DeliveryRecord], pushes: [PushRecord]
    ) -> String {
        let state = stored.state
        var text = "\(state.key.repository) run \(state.key.runID) attempt \(state.key.attempt)"
        text += " · \(state.workflowName ?? "workflow") on \(state.headBranch ?? "?")\n"
        text += "status: \(stored.status)" + (state.completion.map { " (\($0.conclusion))" } ?? "") + "\n"
        text += "card: \(stored.slug)" + (ownsCard ? " (this run holds it)" : " (held by another run, or ended)") + "\n"
        let content = desired?["content"]?.objectValue
        let current = content?["current_step"]?.intValue ?? plan.currentStep
        text += "\n" + StepsDrawing.draw(plan: plan, currentStep: current) + "\n"
        if let content {
            text +=
                "state: \(content["state"]?.stringValue ?? "-")  progress: \(content["progress"]?.doubleValue ?? 0)\n"
        }
        text += "\njobs:\n"
        for job in state.workflowJobs {
            text += "  \(job.id)  \(job.name)  \(job.status.rawValue)\(job.conclusion.map { " (\($0))" } ?? "")\n"
        }
        text += "\ndeliveries:\n"
        for delivery in deliveries.reversed() {
            text += "  \(DatabaseAccess.time(delivery.receivedAt))  \(delivery.event).\(delivery.action ?? "-")"
            text += "  \(delivery.outcome.rawValue)\(delivery.reason.map { ": \($0)" } ?? "")  \(delivery.id)\n"
        }
        text += "\npushes:\n"
        if pushes.isEmpty { text += "  none yet\n" }
        for push in pushes {
            text += "  \(DatabaseAccess.time(push.sentAt))  \(push.kind)  \(push.method) \(push.path)"
            text += "  → \(push.status.map(String.init) ?? "no answer") \(push.outcome)\n"
        }
        if ownsCard {
            text += "\ndesired:      \(desired?["content"]?.canonicalString ?? "-")\n"
            text += "acknowledged: \(acknowledged?.canonicalString ?? "-")\n"
        }
        return text + "\n"
    }
}
