import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

@Suite("explain")
struct RunExplanationTests {
    static let waves: [[RunScript.Job]] = [
        [RunScript.Job("lint", duration: 20)],
        [RunScript.Job("test (a)", duration: 60), RunScript.Job("test (b)", duration: 90)],
    ]

    /// The facts `explain` reads, taken from a harness run instead of a database.
    static func facts(_ harness: BridgeHarness, runID: Int, deliveries: [DeliveryRecord] = []) throws
        -> RunExplanation.Facts
    {
        let engine = harness.engine
        let key = try #require(engine.runs.keys.first { $0.runID == runID })
        let state = try #require(engine.runs[key])
        let slug = try #require(engine.slugs[key])
        let session = engine.sessions[slug]
        let pushes = harness.sent.filter { $0.planned.run == key }.map { output in
            RequestRecord(
                slug: slug, run: key, kind: output.planned.kind.rawValue,
                method: output.planned.request.method.rawValue,
                path: output.planned.request.path, body: output.planned.request.body.canonicalString, sentAt: output.at,
                status: 200, outcome: "acknowledged", detail: nil)
        }
        return RunExplanation.Facts(
            run: StoredRun(state: state, slug: slug, released: engine.released.contains(key), updatedAt: 0),
            session: session.map { StoredSession(session: $0, floor: nil, desired: nil, updatedAt: 0) },
            acknowledged: nil,
            requests: pushes, deliveries: deliveries, settings: engine.settings)
    }

    @Test("a first run grows live; a second is seeded from it, weighted, and its windows are explained")
    func seededAndWindows() throws {
        var harness = BridgeHarness()
        harness.play(RunScript().deliveries(waves: Self.waves))
        let first = RunExplanation.sentences(try Self.facts(harness, runID: 9_000))
        #expect(first.contains { $0.contains("grew live") })
        #expect(first.contains { $0.contains("equal-width matrix") })
        #expect(first.contains { $0.contains("The run completed (success)") })

        let second = RunScript(runID: 9_001, runNumber: 43, start: 1_700_003_600, firstJobID: 60_000)
        harness.play(second.deliveries(waves: Self.waves))
        let sentences = RunExplanation.sentences(try Self.facts(harness, runID: 9_001))
        #expect(sentences.contains { $0.contains("seeded from run 9000") })
        #expect(sentences.contains { $0.contains("lint 20 s, test 90 s") })
        #expect(sentences.contains { $0.contains("live window") && $0.contains("step 2 (test)") })
        #expect(sentences.contains { $0.contains("holds the card") })
    }

    @Test("a create that met the account's 50 and the deletion of the ended activity are both told")
    func accountRoom() throws {
        var harness = BridgeHarness()
        harness.play(RunScript().deliveries(waves: Self.waves))
        var facts = try Self.facts(harness, runID: 9_000)
        let key = facts.run.state.key
        let slug = facts.run.slug
        let room = RequestRecord(
            slug: slug, run: key, kind: "create", method: "POST", path: "/activities", body: "{}",
            sentAt: 1_700_000_001, status: 409, outcome: "room_needed",
            detail: "409 activity.limit_exceeded: activity limit reached (max 50)")
        let deletion = RequestRecord(
            slug: slug, run: key, kind: "delete", method: "DELETE", path: "/activities/\(slug)", body: "null",
            sentAt: 1_700_001_000, status: 204, outcome: "acknowledged", detail: nil)
        facts.requests = [room] + facts.requests + [deletion]
        let sentences = RunExplanation.sentences(facts)
        #expect(
            sentences.contains { $0.contains("limit of 50 activities") && $0.contains("max 50") }, "\(sentences)")
        #expect(sentences.contains { $0.contains("deleted from PushWard at 2023-11-14T22:30:00Z") }, "\(sentences)")
    }

    @Test("a run a newer one took the card from says so")
    func superseded() throws {
        var harness = BridgeHarness()
        let newer = RunScript(runID: 9_500, runNumber: 50, start: 1_700_000_010, firstJobID: 70_000)
        harness.feed(RunScript().job(1, "build", "in_progress", createdAt: 0, startedAt: 1))
        harness.feed(newer.job(70_000, "build", "in_progress", createdAt: 10, startedAt: 11))
        let sentences = RunExplanation.sentences(try Self.facts(harness, runID: 9_000))
        #expect(sentences.contains { $0.contains("does not hold the card: run 9500") })
    }

    @Test("a lost completed delivery is explained as an inferred end")
    func inferred() throws {
        var harness = BridgeHarness()
        harness.play(RunScript().deliveries(waves: Self.waves, complete: false))
        let sentences = RunExplanation.sentences(try Self.facts(harness, runID: 9_000))
        #expect(sentences.contains { $0.contains("completed delivery never arrived") && $0.contains("success") })
    }

    @Test("a delivery: ignored with its reason, rejected with its reason, duplicates counted")
    func deliveries() {
        let ignored = DeliveryRecord(
            id: "d-1", hookID: nil, event: "workflow_job", action: "queued", receivedAt: 1_700_000_000,
            repository: "acme/widgets", runID: 9, runAttempt: 1, outcome: .ignored,
            reason: "branch dependabot/npm matches exclude pattern dependabot/*", contentType: "application/json",
            payload: nil, payloadBytes: 10, duplicates: 2)
        let text = RunExplanation.explain(ignored)
        #expect(text.contains("ignored on purpose: branch dependabot/npm matches exclude pattern dependabot/*"))
        #expect(text.contains("delivered it 2 more times"))
        var rejected = ignored
        rejected.outcome = .rejected
        rejected.reason = "workflow_job.id is missing"
        rejected.duplicates = 0
        #expect(RunExplanation.explain(rejected).contains("rejected: workflow_job.id is missing; GitHub got 400"))
    }

    // MARK: Held changes

    /// The deliveries as the store lists them for `explain`: with their payloads, newest first,
    /// each received at the time its payload says (as the harness plays them).
    static func records(_ events: [WebhookEvent]) -> [DeliveryRecord] {
        var clock: UnixTime = 0
        let records = events.enumerated().map { index, event in
            let (name, body) = PayloadEncoder.encode(event)
            clock = max(clock, PayloadTime.of(event) ?? clock)
            return DeliveryRecord(
                id: "d-\(index)", hookID: nil, event: name, action: nil, receivedAt: clock, repository: "acme/widgets",
                runID: 9_000, runAttempt: 1, outcome: .applied, reason: nil, contentType: "application/json",
                payload: body, payloadBytes: body.count)
        }
        return records.reversed()
    }

    /// `events` played with `settings` (and `budget`), then explained from their records.
    static func explained(_ events: [WebhookEvent], _ settings: ActivitySettings, budget: PushBudget? = nil) throws
        -> [String]
    {
        var harness = BridgeHarness(settings: settings)
        harness.setBudget(budget)
        harness.play(events)
        return RunExplanation.sentences(try facts(harness, runID: 9_000, deliveries: records(events)))
    }

    static func economy(_ fidelity: Fidelity, coalesce: Double = 10, cap: Int = 3_600) -> ActivitySettings {
        var settings = ActivitySettings()
        settings.fidelity = fidelity
        settings.coalesce = coalesce
        settings.maxUpdatesPerHour = cap
        return settings
    }

    /// A build, then four test shards finishing 3 s apart, then a report.
    static let matrix = RunScript().deliveries(waves: [
        [RunScript.Job("build", duration: 40)],
        (0..<4).map { RunScript.Job("test (\($0 + 1)/4)", duration: 60 + Double($0) * 3) },
        [RunScript.Job("report", duration: 20)],
    ])

    @Test("pushing every change, nothing is held, and explain says so")
    func nothingHeld() throws {
        let sentences = try Self.explained(Self.matrix, .pushingEveryChange)
        #expect(sentences.contains { $0.hasPrefix("Each of its") && $0.contains("went out as its own update") })
        #expect(!sentences.contains { $0.contains("did not, to spend fewer") })
    }

    @Test("a matrix at full: the shards' counts were held in the coalesce window and merged into one update")
    func coalescedMatrix() throws {
        let sentences = try Self.explained(Self.matrix, Self.economy(.full))
        // The four shards finish 3 s apart: their counts wait together and go as one update.
        let shards = try #require(sentences.first { $0.contains("(“Test 1/4”)") }, "\(sentences)")
        #expect(shards.contains("(“Test 4/4”) were held in the coalesce window (coalesce 10 s"), "\(shards)")
        #expect(shards.contains("merged into the update at 2023-11-14T22:15:17Z"), "\(shards)")
        #expect(sentences.contains { $0.hasPrefix("Of its") && $0.contains("did not, to spend fewer") })
    }

    @Test("a run at steps: the counts inside a step were below its level and rode along")
    func belowLevel() throws {
        let sentences = try Self.explained(Self.matrix, Self.economy(.steps))
        let held = sentences.filter { $0.contains("below the run's level, steps") }
        #expect(!held.isEmpty, "\(sentences)")
        #expect(held.allSatisfy { $0.contains("rode along with") })
        let shards = try #require(sentences.first { $0.contains("(“Test 1/4”)") }, "\(sentences)")
        #expect(shards.contains("below the run's level, steps (it pushes step changes"), "\(shards)")
        #expect(!sentences.contains { $0.contains("coalesce window") })
    }

    @Test("a long run under the hourly cap: the step changes it could not afford are named as held by the cap")
    func hourlyCap() throws {
        // 30 steps of 40 s: 20 minutes of step changes, far more than 15 updates an hour.
        let steps = (0..<30).map { [RunScript.Job("step \($0 + 1)", duration: 40)] }
        let sentences = try Self.explained(RunScript().deliveries(waves: steps), Self.economy(.full, cap: 15))
        let held = sentences.filter { $0.contains("held by the hourly cap (max_updates_per_hour 15") }
        #expect(!held.isEmpty, "\(sentences)")
        #expect(held.contains { $0.contains("went out with the end frame at") }, "\(held)")
        // A step change held to settle and then kept back by the cap is named with both.
        let settled = try #require(sentences.first { $0.contains("(step 12)") }, "\(sentences)")
        #expect(settled.contains("settle window") && settled.contains("then by the hourly cap"), "\(settled)")
        let capped = try #require(sentences.first { $0.contains("(step 13)") }, "\(sentences)")
        #expect(capped.contains("were held by the hourly cap"), "\(capped)")
    }

    @Test("a run the budget gave no card: every visible change unsent, the planner's reason quoted")
    func skippedByBudget() throws {
        let start = RunScript().start
        let sentences = try Self.explained(
            Self.matrix, Self.economy(.auto), budget: PushBudget(used: 1_000, limit: 1_000, resetsAt: start + 86_400))
        let skipped = try #require(sentences.first { $0.hasPrefix("None of its") }, "\(sentences)")
        #expect(skipped.contains("went out: the budget gave the run no card (no card: not even milestones"))
    }

    @Test("a run the budget drew at steps: its held counts quote the planner's reason")
    func drawnLowerByBudget() throws {
        // 231 updates for 21 runs forecast (the prior and this one): 11 a run, enough for steps, not full.
        let start = RunScript().start
        let sentences = try Self.explained(
            Self.matrix, Self.economy(.auto), budget: PushBudget(used: 0, limit: 231, resetsAt: start + 86_400))
        let shards = try #require(sentences.first { $0.contains("(“Test 1/4”)") }, "\(sentences)")
        #expect(shards.contains("below the run's level, steps"), "\(shards)")
        #expect(
            shards.contains("the budget drew the run at that level: steps (about 10 updates a run) fits"), "\(shards)")
    }
}
