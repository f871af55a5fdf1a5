import BridgeCore
import BridgeTestSupport
import Foundation

/// What runs cost in PushWard updates at each fidelity level: scripted runs and the bundled
/// recordings through the daemon's own core with a simulated clock (as `render` does), the
/// in-memory PushWard enforcing the contract. Reports updates per run (POST + PATCH) against the
/// lower bound (create, first frame, one update per step change, end frame, end: steps + 4), the
/// busiest rolling hour against the cap, and whether the final card is the same at every level.
enum EconomyBenchmark {
    struct Run {
        var name: String
        /// Earlier runs of the same workflow, played first so history is known.
        var history: [WebhookEvent] = []
        var events: [WebhookEvent]
    }

    struct Row {
        var name: String
        var steps: Int
        var deliveries: Int
        /// Updates with every change pushed at once (the bridge before the economy).
        var eager: Int
        var updates: [Fidelity: Int]
        /// The same run when an earlier run of its repository left the activity on PushWard: the
        /// bridge reuses it, so no create.
        var reused: [Fidelity: Int] = [:]
        var busiestHour: [Fidelity: Int]
        var sameFinalCard: Bool
        /// A run with a failed step pays one more: the card turns red when it happens.
        var failed: Bool
        var lowerBound: Int { steps + 4 + (failed ? 1 : 0) }
    }

    static let script = RunScript(runID: 7_001, workflow: "CI")

    static func waves(_ groups: [(String, Int, Double)]) -> [[RunScript.Job]] {
        groups.map { name, count, duration in
            count == 1
                ? [RunScript.Job(name, duration: duration)]
                : (1...count).map { RunScript.Job("\(name) (\($0)/\(count))", duration: duration + Double($0) * 5) }
        }
    }

    static var scriptedRuns: [Run] {
        let ci = waves([
            ("lint", 1, 25), ("build", 2, 90), ("test", 3, 120), ("integration", 1, 150), ("docker", 1, 60),
            ("deploy", 1, 40),
        ])
        let second = RunScript(runID: 7_002, runNumber: 43, workflow: "CI", start: script.start + 86_400)
        let matrix = waves([("build", 1, 60), ("test", 16, 120), ("report", 1, 20)])
        let forty = waves((1...40).map { ("step \($0)", 1, 45) })
        let sixtyFive = waves((1...65).map { ("group \($0)", 1, 30) })
        // The same CI run whose deploy job waits 12 minutes for a self-hosted runner: the card
        // says so once, at `runner_wait` (one update more at `full`, riding along below it).
        var waiting = ci
        waiting[5] = [RunScript.Job("deploy", duration: 40, queuedFor: 720, labels: ["self-hosted", "arm64"])]
        // Its twin whose deploy waits 100 s, under `runner_wait`: a wait past the settle window
        // shows the queued step on its own already; the difference between the two is the crossing.
        var queuedBriefly = ci
        queuedBriefly[5] = [RunScript.Job("deploy", duration: 40, queuedFor: 100, labels: ["self-hosted", "arm64"])]
        return [
            Run(name: "CI, 6 job groups, first run", events: script.deliveries(waves: ci)),
            Run(
                name: "same workflow, second run", history: script.deliveries(waves: ci),
                events: second.deliveries(waves: ci)),
            Run(name: "16-shard matrix, 3 groups", events: script.deliveries(waves: matrix)),
            Run(name: "40-step run", events: script.deliveries(waves: forty)),
            Run(name: "65 job groups", events: script.deliveries(waves: sixtyFive)),
            Run(name: "CI, deploy 100 s queued (under runner_wait)", events: script.deliveries(waves: queuedBriefly)),
            Run(name: "CI, deploy 12 min queued for a runner", events: script.deliveries(waves: waiting)),
        ]
    }

    static func recordedRuns(files: [String]) -> [Run] {
        files.compactMap { file in
            guard let contents = FileManager.default.contents(atPath: file),
                let deliveries = try? RecordedDelivery.parse(fileName: file, contents: contents)
            else { return nil }
            let events = deliveries.compactMap {
                try? WebhookDecoder.decode(event: $0.event, body: $0.body, contentType: nil)
            }
            return Run(name: (file as NSString).lastPathComponent, events: events)
        }
    }

    /// The harness after playing `run`, and the updates its own run caused.
    static func play(_ run: Run, _ settings: ActivitySettings) -> (BridgeHarness, [RenderSession.Output]) {
        var harness = BridgeHarness(settings: settings)
        harness.play(run.history)
        let before = harness.sent.count
        harness.play(run.events)
        return (harness, updates(Array(harness.sent.dropFirst(before))))
    }

    /// The requests that are PushWard updates (POST and PATCH): deleting an ended activity, so the
    /// account stays under its 50, spends none.
    static func updates(_ sent: [RenderSession.Output]) -> [RenderSession.Output] {
        sent.filter { $0.planned.kind != .delete }
    }

    /// `run` played after a short earlier run of its repository that ended two hours before it
    /// (or after its own `history`, which is one already): the updates `run` itself caused.
    static func reusedCost(_ run: Run, _ settings: ActivitySettings) -> Int {
        var earlier = run
        if run.history.isEmpty, let first = run.events.first, let (repository, at) = origin(of: first) {
            var script = RunScript(runID: 6_999_999, runNumber: 1, workflow: "earlier", start: at - 7_200)
            script.repository = repository
            earlier.history = script.deliveries(waves: [[RunScript.Job("build", duration: 10)]])
        }
        return play(earlier, settings).1.count
    }

    /// The repository and time of a delivery.
    static func origin(of event: WebhookEvent) -> (Repository, UnixTime)? {
        switch event {
        case .workflowRun(let delivery):
            return (delivery.repository, delivery.run.createdAt ?? delivery.run.updatedAt ?? script.start)
        case .workflowJob(let delivery):
            return (delivery.repository, delivery.job.createdAt ?? script.start)
        default:
            return nil
        }
    }

    static func measure(_ run: Run) -> Row {
        let (eagerHarness, eager) = play(run, .pushingEveryChange)
        let final = eagerHarness.stored()
        let steps = final?.content["total_steps"]?.intValue ?? 0
        var row = Row(
            name: run.name, steps: steps, deliveries: run.events.count, eager: eager.count, updates: [:],
            busiestHour: [:], sameFinalCard: true, failed: DesiredActivity.showsFailure(final?.content ?? [:]))
        for level in Fidelity.concrete {
            var settings = ActivitySettings()
            settings.fidelity = level
            let (harness, sent) = play(run, settings)
            row.updates[level] = sent.count
            row.reused[level] = reusedCost(run, settings)
            let times = sent.map(\.at)
            row.busiestHour[level] = times.map { start in times.filter { $0 >= start && $0 < start + 3_600 }.count }
                .max()
            // What the phone shows: the content and the state (the TTLs of the POST may differ by level).
            let card = harness.stored().map { [$0.state: JSONValue.object($0.content)] }
            if card != final.map({ [$0.state: JSONValue.object($0.content)] }) || !harness.violations.isEmpty {
                row.sameFinalCard = false
            }
        }
        return row
    }

    /// A free month: 250 updates, 300 runs spread over the 30 days before the reset, the planner
    /// choosing each run's level (`fidelity: auto`). Returns the updates spent, the runs carded, and
    /// whether every carded run ended.
    static func freeMonth() -> (spent: Int, carded: Int, skipped: Int, allEnded: Bool) {
        var harness = BridgeHarness(settings: ActivitySettings())
        let start = script.start
        harness.setBudget(PushBudget(used: 0, limit: 250, resetsAt: start + 30 * 86_400))
        var keys: [RunKey] = []
        for index in 0..<300 {
            let run = RunScript(
                runID: 20_000 + index, runNumber: index + 1, start: start + Double(index) * 30 * 86_400 / 300,
                firstJobID: 2_000_000 + index * 10)
            keys.append(RunKey(repository: run.repository.fullName, runID: run.runID, attempt: 1))
            harness.play(run.deliveries(waves: waves([("build", 1, 60), ("test", 2, 120), ("deploy", 1, 30)])))
        }
        let carded = keys.filter { harness.engine.runs[$0]?.cardDecision?.level != nil }
        let ended = carded.allSatisfy { key in
            harness.sent.contains { $0.planned.run == key && $0.planned.kind == .end }
        }
        return (updates(harness.sent).count, carded.count, keys.count - carded.count, ended)
    }

    /// Prints the table and returns whether every target holds.
    static func report(recorded files: [String]) -> Bool {
        let played = recordedRuns(files: files) + scriptedRuns
        let runs = Dictionary(played.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let rows = played.map(measure)
        let cap = ActivitySettings().maxUpdatesPerHour
        print(
            "\nPush economy (updates = POST + PATCH per run; lower bound = steps + 4, + 1 for a failed run; "
                + "cap \(cap)/hour per card)")
        print(
            "| run | steps | deliveries | every change | full | steps | milestones | on a reused card | lower bound "
                + "| busiest hour | same final card |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        var holds = true
        for row in rows {
            let full = row.updates[.full] ?? 0
            let steps = row.updates[.steps] ?? 0
            let milestones = row.updates[.milestones] ?? 0
            let busiest = row.busiestHour.values.max() ?? 0
            let reused = Fidelity.concrete.map { String(row.reused[$0] ?? 0) }.joined(separator: " / ")
            print(
                "| \(row.name) | \(row.steps) | \(row.deliveries) | \(row.eager) | \(full) | \(steps) | \(milestones) "
                    + "| \(reused) | \(row.lowerBound) | \(busiest) | \(row.sameFinalCard ? "yes" : "NO") |")
            // On a reused card a run pays no create: one update less at every level. Not less
            // where the hourly cap binds (the create's room goes to one more step change) or for a
            // run measured after its own history, which reuses its card in both columns.
            let reuseSaves = Fidelity.concrete.allSatisfy { level in
                let bound = runs[row.name]?.history.isEmpty == false || (row.busiestHour[level] ?? 0) >= cap
                return (row.reused[level] ?? 0) <= (row.updates[level] ?? 0) - (bound ? 0 : 1)
            }
            let targets =
                steps <= row.lowerBound && full <= row.lowerBound + row.steps / 2 && milestones <= 5
                && busiest <= cap && row.sameFinalCard && reuseSaves
            if !targets { holds = false }
        }
        print(
            "on a reused card: full / steps / milestones when an earlier run of the repository left its activity "
                + "on PushWard (no create)")
        let month = freeMonth()
        print(
            "free month (250 updates, 300 runs, fidelity auto): \(month.spent) spent, \(month.carded) runs carded, "
                + "\(month.skipped) without a card, every carded run ended: \(month.allEnded ? "yes" : "NO")")
        if month.spent > 250 || !month.allEnded { holds = false }
        print(
            holds
                ? "targets: steps ≤ lower bound, full ≤ lower bound + steps/2, milestones ≤ 5, cap kept, one final card, "
                    + "a free month never overspent: all met"
                : "targets: NOT all met (see the rows above)")
        return holds
    }
}
