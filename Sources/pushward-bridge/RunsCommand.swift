import BridgeCore
import BridgeDaemon
import BridgeStore
import Foundation

/// `runs list` and `runs show RUN_ID`: which run drives which card, and what was sent.
enum RunsCommand {
    static let help = """
        Usage: pushward-bridge runs list [--repo OWNER/NAME] [--limit N] [--json] [--config PATH | --database PATH]
               pushward-bridge runs show RUN_ID [--json] [--no-color] [--config PATH | --database PATH]

        list: recent runs, those in progress first: activity slug, attempt, status, last push, and the
        PushWard updates each run's card cost (of the monthly budget).
        show: one run (every attempt): the card as the phones show it (drawn in the terminal, in colour
        on a TTY unless --no-color or NO_COLOR), pending timers, the jobs, a timeline of deliveries and
        PushWard requests with their answers, and desired vs acknowledged content.
        Reads the database; safe while the daemon runs.
        """

    static let spec = CommandSpec(
        name: "runs", subcommands: ["list", "show"], valued: ["config", "database", "repo", "limit"],
        flags: ["json", "no-color"], help: help
    ) { run($0) }

    static func run(_ parsed: ParsedArguments) -> ExitCode {
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
            var settings = ActivitySettings()
            var filter = DeliveryFilter()
            if parsed.options["database"] == nil,
                case .success(let configuration) = CLI.effectiveConfiguration(path: parsed.options["config"])
            {
                settings = configuration.activity
                filter = configuration.filter
            }
            let environment = ProcessInfo.processInfo.environment
            let colored = !parsed.flags.contains("no-color") && environment["NO_COLOR"] == nil && isatty(1) == 1
            let options = TextOptions(
                colored: colored, now: Date().timeIntervalSince1970, settings: settings, filter: filter)
            return withDatabase(parsed) { database in
                try show(database, runID: runID, json: parsed.flags.contains("json"), options: options)
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
            let values = runs.map(RunDocument.listing)
            print(JSONValue.array(values).canonicalString)
            return .success
        }
        guard !runs.isEmpty else {
            print("no runs recorded yet")
            return .success
        }
        let header = ["RUN", "ATTEMPT", "REPOSITORY", "WORKFLOW", "BRANCH", "STATUS", "SLUG", "UPDATES", "LAST PUSH"]
        let rows = runs.map { run in
            [
                String(run.key.runID), String(run.key.attempt), run.key.repository, run.workflow ?? "-",
                run.branch ?? "-",
                run.status + (run.conclusion.map { " (\($0))" } ?? "") + (run.holdsLiveActivity ? " *" : ""),
                run.slug, String(run.updatesSpent ?? 0), DatabaseAccess.time(run.lastPushAt),
            ]
        }
        print(Table.render(header: header, rows: rows))
        print("* holds its card now")
        return .success
    }

    static func show(_ database: BridgeDatabase, runID: Int, json: Bool, options: TextOptions) throws -> ExitCode {
        let attempts = try database.runAttempts(runID: runID)
        guard !attempts.isEmpty else {
            CLI.error(try notRecorded(runID, database))
            return .failure
        }
        let deliveriesMark = try database.retentionMark("deliveries")
        var documents: [JSONValue] = []
        var text = ""
        for stored in attempts {
            let state = stored.state
            let plan = StepPlanner.plan(for: state)
            let activity = try database.session(slug: stored.slug)
            let ownsActivity = activity?.stored.session.owner == state.key
            let pushes = try database.requests(for: state.key)
            let deliveries = try database.listDeliveries(run: state.key, limit: 500)
            let alerts = try database.alerts(repository: state.key.repository, runID: state.key.runID)
                .filter { $0.run == state.key }
            let actions = try database.actions(repository: state.key.repository, runID: state.key.runID)
                .filter { $0.run == state.key }
            let desired = ownsActivity ? activity?.stored.desired : nil
            let acknowledged = ownsActivity ? activity?.acknowledged : nil
            var document = RunDocument.attempt(
                stored, plan: plan, ownsActivity: ownsActivity, phase: activity?.stored.session.phase, desired: desired,
                acknowledged: acknowledged, pushes: pushes, deliveries: deliveries, alerts: alerts,
                target: activity?.stored.session.identity.target, actions: actions)
            if let notice = RetentionNotice.prunedDeliveries(
                stored, remaining: deliveries.count, mark: deliveriesMark),
                case .object(var object) = document
            {
                object["retention"] = .string(notice)
                document = .object(object)
                text += "note: \(notice)\n"
            }
            documents.append(document)
            text += describe(
                stored, plan: plan, ownsActivity: ownsActivity, session: activity?.stored.session, desired: desired,
                acknowledged: acknowledged, deliveries: deliveries, pushes: pushes, alerts: alerts, actions: actions,
                options: options)
        }
        if json {
            print(JSONValue.array(documents).canonicalString)
        } else {
            print(text, terminator: "")
        }
        return .success
    }

    /// What to say about a run id with no row: that retention pruned it, when some repository's
    /// pruned runs reach that id, else that it was never recorded.
    static func notRecorded(_ runID: Int, _ database: BridgeDatabase) throws -> String {
        RetentionNotice.prunedRun(runID, marks: try database.prunedRunMarks(coveringRunID: runID))
            ?? "no run \(runID) recorded"
    }

    static func describe(
        _ stored: StoredRun, plan: StepPlan, ownsActivity: Bool, session: ActivitySession?, desired: JSONValue?,
        acknowledged: JSONValue?, deliveries: [DeliveryRecord], pushes: [RequestRecord], alerts: [AlertRecord] = [],
        actions: [ActionRecord] = [], options: TextOptions
    ) -> String {
        // Names, reasons and bodies below come from payloads and PushWard's answers: each goes
        // through `safe` (controls made visible) before it joins the text; the card drawing
        // sanitizes its own before adding colour.
        let safe = TerminalText.sanitized
        let state = stored.state
        var text = "\(safe(state.key.repository)) run \(state.key.runID) attempt \(state.key.attempt)"
        text += " · \(safe(state.workflowName ?? "workflow")) on \(safe(state.headBranch ?? "?"))"
        text += (state.origin.forkName.map { " from \(safe($0))" } ?? "") + "\n"
        text += "status: \(safe(stored.status))" + (state.completion.map { " (\(safe($0.conclusion)))" } ?? "") + "\n"
        if state.passedOnRerun {
            let failed = state.failedBefore ?? []
            text +=
                "flaky: passed on re-run (attempt \(state.key.attempt))"
                + (failed.isEmpty ? "" : "; failed before: " + failed.map(safe).joined(separator: ", ")) + "\n"
        }
        if let wait = state.runnerWait {
            text += "runner: " + safe(wait.summary(in: state, formatTime: DatabaseAccess.time)) + "\n"
        }
        text += "card: \(safe(stored.slug))" + (ownsActivity ? " (this run holds it)" : " (not held by this run now)")
        if let total = session?.totalUpdates { text += " · \(total) updates on this card so far" }
        text += "\nreaches: " + (session?.identity.target.map { safe($0.description) } ?? "everyone the key reaches")
        text += "\ncost: \(state.updatesSpent ?? 0) PushWard updates (POST + PATCH)"
        if let placement = state.placement {
            text += "\nslot: " + safe(placement.summaryLine(formatTime: DatabaseAccess.time))
        }
        if let decision = state.cardDecision {
            text += "\nbudget: \(decision.level?.rawValue ?? "no card") — \(safe(decision.reason))"
        }
        if let withheld = CardWithholding.of(state, filter: options.filter) {
            text += "\nno card: " + safe(withheld.reason)
        }
        text += "\n\n"

        // What the phones show: the content this run's acknowledged requests left.
        if let shown = StatusSnapshot.replayed(pushes) {
            let drawing = CardTerminalDrawing(layout: shown.layout, colored: options.colored)
            text += drawing.render(now: options.now) + "\n"
        } else {
            text += "(nothing shown on phones for this run yet)\n"
        }
        if let session, ownsActivity {
            if let problem = session.lastProblem {
                text += "\nlast PushWard problem (\(DatabaseAccess.time(session.lastProblemAt))): \(safe(problem))\n"
            }
            for (field, problem) in (session.droppedFields ?? [:]).sorted(by: { $0.key < $1.key }) {
                text += "dropped after a refusal: \(safe(field)) (\(safe(problem)))\n"
            }
            for timer in pendingTimers(state, session: session, options: options) { text += "pending: \(timer)\n" }
        }
        text += "\njobs:\n"
        for job in state.workflowJobs {
            let conclusion = job.conclusion.map { " (\(safe($0)))" } ?? ""
            text += "  \(job.id)  \(safe(job.name))  \(job.status.rawValue)\(conclusion)\n"
        }
        text += "\ntimeline (deliveries ← GitHub, requests → PushWard):\n"
        var events: [(UnixTime, Int, String)] = []
        for delivery in deliveries {
            var line = "← \(safe(delivery.event)).\(safe(delivery.action ?? "-"))  \(delivery.outcome.rawValue)"
            line += delivery.reason.map { ": \(safe($0))" } ?? ""
            line += delivery.duplicates > 0 ? " (+\(delivery.duplicates) duplicates)" : ""
            events.append((delivery.receivedAt, 0, line + "  \(safe(delivery.id))"))
        }
        for push in pushes {
            var line =
                "→ \(push.kind)  \(push.method) \(safe(push.path))  \(push.status.map(String.init) ?? "no answer") "
            line += safe(push.outcome) + (push.detail.map { ": \(safe($0))" } ?? "")
            events.append((push.sentAt, 1, line))
        }
        if events.isEmpty { text += "  nothing yet\n" }
        for (time, _, line) in events.sorted(by: { ($0.0, $0.1) < ($1.0, $1.1) }) {
            text += "  \(DatabaseAccess.time(time))  \(line)\n"
        }
        if !alerts.isEmpty {
            text += "\nalerts:\n"
            for alert in alerts { text += "  \(safe(AlertSummary.sentence(alert)))\n" }
        }
        if !actions.isEmpty {
            text += "\nactions from phones:\n"
            for action in actions { text += "  \(safe(ActionSummary.sentence(action)))\n" }
        }
        if ownsActivity {
            // JSON escapes C0 but writes C1 and bidi characters as they are.
            text += "\ndesired:      \(safe(desired?["content"]?.canonicalString ?? "-"))\n"
            text += "acknowledged: \(safe(acknowledged?.canonicalString ?? "-"))\n"
        }
        return text + "\n"
    }

    /// How `runs show` prints: colours (a TTY, no `--no-color`, no `NO_COLOR`), the time for the
    /// live window's countdown, and the settings that time the end frames.
    struct TextOptions {
        var colored: Bool
        var now: UnixTime
        var settings: ActivitySettings
        /// The filters, for whether a fork's run is withheld from the phone (`filters.forks`).
        var filter = DeliveryFilter()
    }

    /// What the card waits for: a retry, the end frame, the end.
    static func pendingTimers(_ state: RunState, session: ActivitySession, options: TextOptions) -> [String] {
        var timers: [String] = []
        if let retryAt = session.retryAt, retryAt > options.now {
            timers.append("retry at \(DatabaseAccess.time(retryAt)) after \(session.failures) failure(s)")
        }
        switch session.phase {
        case .finalShown:
            if let shown = session.finalShownAt {
                timers.append("state: ended at \(DatabaseAccess.time(shown + options.settings.endDisplayTime))")
            }
        case .live, .needsCreate, .needsFirstFrame:
            if let completion = state.completion {
                timers.append(
                    "end frame at \(DatabaseAccess.time(completion.recognizedAt + options.settings.endDelay))")
            }
        case .ended:
            break
        }
        return timers
    }
}
