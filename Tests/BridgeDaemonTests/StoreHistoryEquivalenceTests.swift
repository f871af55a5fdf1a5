import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeDaemon

/// History and runs read back from SQLite give the same cards as history kept in memory: the
/// daemon's service, with a history cache of one workflow, letting go of every finished run and
/// idle card after each step and restarting from the store halfway, sends exactly the requests
/// `render` (everything in memory) sends for the same deliveries at the same times.
@Suite("History read from the store")
struct StoreHistoryEquivalenceTests {
    /// One request as a phone would see it, per card.
    struct Line: Equatable, CustomStringConvertible {
        var slug: String
        var at: UnixTime
        var method: String
        var path: String
        var body: String
        var description: String { "\(at) \(method) \(path) \(body)" }
    }

    /// A timed delivery: the payload's own time, as `render` uses it.
    static func timed(_ events: [WebhookEvent]) -> [(UnixTime, WebhookEvent)] {
        var clock: UnixTime = 0
        return events.map { event in
            clock = max(clock, PayloadTime.of(event) ?? clock)
            return (clock, event)
        }
    }

    /// `render`'s answer: per card (slug), the requests in order.
    static func inMemory(_ events: [WebhookEvent]) -> [String: [Line]] {
        var harness = BridgeHarness()
        harness.play(events)
        return Dictionary(grouping: harness.sent.map(line), by: \.slug)
    }

    static func line(_ output: RenderSession.Output) -> Line {
        Line(
            slug: output.planned.request.slug, at: output.at, method: output.planned.request.method.rawValue,
            path: output.planned.request.path,
            body: output.planned.request.body.canonicalString)
    }

    /// The daemon's service on a scratch database, driven with the same simulated clock.
    final class StoreBacked {
        let directory: ScratchDirectory
        var service: BridgeService
        var clock: UnixTime = 0
        var lines: [Line] = []
        var sequence = 0
        let configuration: BridgeConfiguration

        init() throws {
            directory = try ScratchDirectory()
            var configuration = BridgeConfiguration()
            configuration.activity = .pushingEveryChange
            self.configuration = configuration
            service = try Self.start(path: directory.path("bridge.sqlite"), configuration: configuration, at: 0)
        }

        /// A service on what the store holds, as the daemon starts.
        static func start(path: String, configuration: BridgeConfiguration, at now: UnixTime) throws -> BridgeService {
            let database = try BridgeDatabase(path: path)
            let engine = try database.loadEngine(
                configuration: configuration.engineConfiguration, at: now, historyCapacity: 1)
            return BridgeService(
                database: database, engine: engine, configuration: configuration,
                logger: Logger(label: "test", minimumLevel: .error, sink: { _ in }))
        }

        /// A start from what the store holds, as after a restart.
        func restart() throws {
            service = try Self.start(path: directory.path("bridge.sqlite"), configuration: configuration, at: clock)
        }

        /// Everything due at `now`, each request acknowledged at once, until nothing more is due.
        func flush(at now: UnixTime) async {
            for _ in 0..<64 {
                let due = await service.dueRequests(at: now)
                if due.isEmpty { break }
                for planned in due {
                    lines.append(
                        Line(
                            slug: planned.request.slug, at: now, method: planned.request.method.rawValue,
                            path: planned.request.path,
                            body: planned.request.body.canonicalString))
                    await service.complete(planned, answer: .success(status: 200), dryRun: false, at: now)
                }
            }
            // Far past the grace, so every run done with its card and every idle ended card goes.
            await service.forgetFinished(at: now + 7_200)
        }

        func runTimers(until limit: UnixTime) async {
            var fired = 0
            while fired < RenderSession.maximumTimersPerGap, let next = await service.nextWakeup(after: clock),
                next <= limit
            {
                fired += 1
                clock = next
                await flush(at: next)
            }
        }

        func feed(_ event: WebhookEvent, at time: UnixTime) async throws {
            await runTimers(until: time)
            clock = max(clock, time)
            sequence += 1
            let (name, body) = PayloadEncoder.encode(event)
            let delivery = IncomingDelivery(
                id: "delivery-\(sequence)", event: name, hookID: nil, contentType: "application/json", body: body,
                receivedAt: clock)
            let result = await service.ingest([delivery])
            #expect(result.first?.status ?? 0 < 300, "\(result)")
            await flush(at: clock)
        }
    }

    /// Per slug, the requests in order, and the updates each card counted (kept across the times
    /// its ended card was let go of and read back).
    static func storeBacked(_ events: [WebhookEvent], restartAt restart: Int? = nil) async throws -> [String: [Line]] {
        try await storeBackedWithTotals(events, restartAt: restart).lines
    }

    static func storeBackedWithTotals(_ events: [WebhookEvent], restartAt restart: Int? = nil) async throws -> (
        lines: [String: [Line]], totals: [String: Int]
    ) {
        let store = try StoreBacked()
        for (index, (time, event)) in timed(events).enumerated() {
            if index == restart { try store.restart() }
            try await store.feed(event, at: time)
        }
        // As `render` does: the clock runs on past every end frame and grace period.
        let settings = store.configuration.activity
        await store.runTimers(
            until: store.clock + settings.completionGrace + settings.endDelay + settings.endDisplayTime
                + settings.minUpdateInterval + settings.coalesce + 1)
        let reader = try BridgeDatabase(path: store.directory.path("bridge.sqlite"), readOnly: true)
        var totals: [String: Int] = [:]
        for slug in Set(store.lines.map(\.slug)) {
            totals[slug] = try reader.session(slug: slug)?.stored.session.totalUpdates
        }
        return (Dictionary(grouping: store.lines, by: \.slug), totals)
    }

    /// Runs of two workflows in two repositories on three branches, one after another, so each
    /// new run is seeded and weighted by earlier ones the store must give back; a re-run of a run
    /// long forgotten (it inherits from the attempt before it); and a late job delivery for a
    /// finished, forgotten run.
    static func workload() -> [WebhookEvent] {
        let waves: [[RunScript.Job]] = [
            [RunScript.Job("lint", duration: 20)],
            [RunScript.Job("build (linux)", duration: 60), RunScript.Job("build (mac)", duration: 90)],
            [RunScript.Job("test", duration: 45)],
        ]
        var events: [WebhookEvent] = []
        var start: Double = 1_750_000_000
        var runID = 100
        for round in 0..<4 {
            for repository in ["acme/widgets", "acme/gadgets"] {
                for workflow in ["CI", "Nightly"] {
                    runID += 1
                    var script = RunScript(runID: runID, runNumber: runID, start: start, firstJobID: runID * 100)
                    script.repository = Repository(fullName: repository, htmlURL: "https://github.com/\(repository)")
                    script.workflow = workflow
                    script.branch = ["main", "feature/α", "main"][(round + runID) % 3]
                    let slower = waves.map { wave in
                        wave.map { RunScript.Job($0.name, duration: $0.duration * Double(1 + round % 2)) }
                    }
                    events += script.deliveries(waves: slower)
                    start += 900
                }
            }
        }
        // A re-run of the first run, hours later: attempt 2 inherits attempt 1's steps.
        var rerun = RunScript(runID: 101, attempt: 2, runNumber: 101, start: start, firstJobID: 99_000)
        rerun.repository = Repository(fullName: "acme/widgets", htmlURL: "https://github.com/acme/widgets")
        rerun.workflow = "CI"
        events += rerun.deliveries(waves: [[RunScript.Job("test", duration: 30)]])
        // A late duplicate of a finished run's job.
        var late = RunScript(runID: 102, runNumber: 102, start: start + 100, firstJobID: 10_200)
        late.repository = Repository(fullName: "acme/widgets", htmlURL: "https://github.com/acme/widgets")
        late.workflow = "Nightly"
        events.append(
            late.job(10_200, "lint", "completed", createdAt: 0, startedAt: 1, completedAt: 21, conclusion: "success"))
        return events
    }

    @Test("the golden scenarios send the same requests", arguments: GoldenScenarios.all.keys.sorted())
    func goldenScenarios(name: String) async throws {
        let events = GoldenScenarios.all[name]!()
        let expected = Self.inMemory(events)
        #expect(!expected.isEmpty)
        #expect(try await Self.storeBacked(events) == expected)
    }

    @Test("many runs seeded from history the store gives back send the same requests, across a restart")
    func workloadAcrossRestart() async throws {
        let events = Self.workload()
        let expected = Self.inMemory(events)
        #expect(expected.values.map(\.count).reduce(0, +) > 100)
        var harness = BridgeHarness()
        harness.play(events)
        let totals = harness.engine.sessions.compactMapValues(\.totalUpdates)
        #expect(totals.values.allSatisfy { $0 > 10 })
        let stored = try await Self.storeBackedWithTotals(events)
        #expect(stored.lines == expected)
        #expect(stored.totals == totals)
        #expect(try await Self.storeBacked(events, restartAt: events.count / 2) == expected)
    }
}
