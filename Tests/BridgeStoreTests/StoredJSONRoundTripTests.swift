import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

/// The store writes its JSON columns with `JSONEncoder` (keys sorted) and the run state with
/// `RunStateJSON`, and reads both back with `JSONDecoder`: whatever the engine holds must come
/// back equal, and the run state writer must say what `JSONEncoder` says.
@Suite("Stored JSON round trip")
struct StoredJSONRoundTripTests {
    static let script = RunScript()

    /// The store's own encoder (`BridgeDatabase.json`).
    static func text<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try BridgeDatabase.makeEncoder().encode(value), as: UTF8.self)
    }

    /// Decodes back to an equal value.
    static func expectRoundTrip<T: Codable & Equatable>(
        _ value: T, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let text = try text(value)
        let decoded = try JSONDecoder().decode(T.self, from: Data(text.utf8))
        #expect(decoded == value, "\(text)", sourceLocation: sourceLocation)
    }

    /// Everything the store writes for an engine: each run, card session, progress floor, the gate.
    static func expectEngineRoundTrips(
        _ engine: BridgeEngine, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for state in engine.runs.values {
            try expectRoundTrip(state, sourceLocation: sourceLocation)
            // The store's hand-written run state writer: the same document as the encoder.
            let written = try #require(RunStateJSON.text(of: state), sourceLocation: sourceLocation)
            #expect(
                try JSONValue(parsing: Data(written.utf8)) == JSONValue(parsing: Data(text(state).utf8)),
                "\(written)", sourceLocation: sourceLocation)
        }
        for session in engine.sessions.values { try expectRoundTrip(session, sourceLocation: sourceLocation) }
        for floor in engine.progressFloors.values { try expectRoundTrip(floor, sourceLocation: sourceLocation) }
        try expectRoundTrip(engine.gate, sourceLocation: sourceLocation)
    }

    static func fixtureEvent(_ name: String) throws -> WebhookEvent {
        try WebhookDecoder.decode(
            event: String(name.prefix { $0 != "." }), body: TestAssets.fixture(name), contentType: "application/json")
    }

    // MARK: What the bridge stores

    @Test("the recorded re-run (attempt 10): every state along the way comes back equal")
    func recordedRerun() throws {
        let names = [
            "workflow_job.queued.attempt10-pre-commit.json", "workflow_job.completed.attempt10-pre-commit.json",
            "workflow_job.queued.attempt10-test.json", "workflow_job.completed.attempt10-test.json",
            "workflow_run.completed.attempt10.json",
        ]
        var harness = BridgeHarness()
        for name in names {
            harness.feed(try Self.fixtureEvent(name))
            try Self.expectEngineRoundTrips(harness.engine)
        }
        harness.finish()
        try Self.expectEngineRoundTrips(harness.engine)
        let state = try #require(harness.engine.runs.values.first)
        #expect(state.jobs.count == 2)
        #expect(state.completion != nil)
        #expect(state.run != nil)
        #expect(harness.engine.sessions.values.contains { $0.acknowledged != nil })
    }

    @Test("every recorded workflow delivery, through one engine, comes back equal")
    func everyRecordedDelivery() throws {
        let names = try TestAssets.fixtureNames().filter {
            ($0.hasPrefix("workflow_job.") || $0.hasPrefix("workflow_run.")) && !$0.hasSuffix(".capture.json")
        }
        #expect(names.count > 20)
        // Straight into the engine, arriving a second apart: the recordings span years, and a
        // render session's clock would run every timer in between.
        var engine = BridgeEngine()
        for (index, name) in names.enumerated() {
            _ = engine.receive(try Self.fixtureEvent(name), at: 1_700_000_000 + Double(index))
            try Self.expectEngineRoundTrips(engine)
        }
        #expect(engine.runs.count > 3)
        #expect(engine.runs.values.contains { $0.jobMetadata != nil })
        #expect(engine.runs.values.contains { $0.run?.pullRequests.isEmpty == false })
    }

    @Test("seeded, re-run and matrix runs: history seeds, estimates and inherited steps come back equal")
    func scriptedRuns() throws {
        let waves: [[RunScript.Job]] = [
            [RunScript.Job("lint", duration: 20)],
            (1...6).map {
                RunScript.Job(
                    "test (shard-\($0))", duration: Double(10 + $0), conclusion: $0 == 4 ? "failure" : "success")
            },
            [RunScript.Job("report \"final\" / ünïcode 🚀", duration: 5, conclusion: "skipped")],
        ]
        var harness = BridgeHarness()
        harness.play(Self.script.deliveries(waves: waves))
        try Self.expectEngineRoundTrips(harness.engine)

        // A re-run of the failed jobs inherits the first attempt's steps.
        let rerun = RunScript(attempt: 2, start: Self.script.start + 600, firstJobID: 80_000)
        harness.feed(rerun.run("requested", at: 0))
        harness.feed(rerun.job(80_000, "test (shard-4)", "in_progress", createdAt: 1, startedAt: 2))
        try Self.expectEngineRoundTrips(harness.engine)

        // A later run of the same workflow is seeded from history.
        let second = RunScript(runID: 9_001, runNumber: 43, start: Self.script.start + 3_600, firstJobID: 60_000)
        for event in second.deliveries(waves: waves) {
            harness.feed(event)
            try Self.expectEngineRoundTrips(harness.engine)
        }
        harness.finish()
        try Self.expectEngineRoundTrips(harness.engine)

        let states = Array(harness.engine.runs.values)
        #expect(states.contains { !$0.inherited.isEmpty })
        #expect(states.contains { $0.seed != nil && !$0.estimates.isEmpty })
        #expect(states.contains { $0.completion != nil && $0.jobs.count > 5 })
        #expect(harness.engine.sessions.values.contains { $0.acknowledged?.content.isEmpty == false })
        #expect(!harness.engine.progressFloors.isEmpty)
        #expect(harness.violations.isEmpty)
    }

    @Test("the run state writer declines a state holding a non-finite number, which the encoder reports")
    func runStateWriterNonFinite() throws {
        var harness = BridgeHarness()
        harness.feed(Self.script.job(1, "build", "in_progress", createdAt: 0, startedAt: 1))
        var state = try #require(harness.engine.runs.values.first)
        #expect(RunStateJSON.text(of: state) != nil)
        state.estimates["build"] = .infinity
        #expect(RunStateJSON.text(of: state) == nil)
        #expect(throws: EncodingError.self) { try Self.text(state) }
    }

    @Test("a session with a refused body, a problem and every optional set comes back equal")
    func activitySession() throws {
        var session = ActivitySession(identity: ActivityIdentity(slug: "gh-1234abcd", name: "GitHub: acme/widgets"))
        try Self.expectRoundTrip(session)
        session.assign(to: RunKey(repository: "acme/widgets", runID: 9_000, attempt: 3))
        session.phase = .live
        session.acknowledged = StoredActivity(
            state: "ongoing",
            content: [
                "progress": 0.375, "total_steps": 3, "step_labels": ["lint", "test \"unit\"", "déploy 🚀"],
                "state": "Running\ttests\n", "nested": ["a": [1, 2.5, nil, true], "b": [:]],
            ], name: "GitHub: acme/widgets", priority: 5)
        session.lastPatchAt = 1_700_000_123.456
        session.finalShownAt = 1_700_000_200
        session.retryAt = 1_700_000_300.25
        session.failures = 2
        session.rejectedBody = ["content": ["progress": 1.5, "odd key \u{1}": "\u{0}"], "state": nil]
        session.needsFullFrame = true
        session.lastProblem = "422 \"validation\" \\ content.progress: must be ≤ 1\n"
        session.lastProblemAt = 1_700_000_124
        try Self.expectRoundTrip(session)
    }

    @Test("the dispatch gate, idle and blocking everything, comes back equal")
    func dispatchGate() throws {
        var gate = DispatchGate()
        try Self.expectRoundTrip(gate)
        gate.quotaPausedUntil = 1_700_086_400
        gate.rateLimitedUntil = 1_700_000_120.5
        gate.authBlockedUntil = 1_700_003_600
        gate.authFailures = 3
        gate.reason = "quota.exceeded: \"monthly\" limit"
        for _ in 0..<CircuitBreaker.threshold { gate.breaker.recordFailure(at: 1_700_000_000) }
        #expect(gate.breaker.state == .open)
        try Self.expectRoundTrip(gate)
        try Self.expectRoundTrip(
            ProgressFloor(run: RunKey(repository: "a/b", runID: 1, attempt: 2), step: 3, progress: 0.1))
    }
}
