import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// The month chart's reads: acknowledged pushes per UTC day, the planner's decisions, and a
/// run's cost in the list, on a real file.
@Suite("budget queries", .onEachEngine)
struct BudgetQueriesTests {
    let url: URL
    let database: BridgeDatabase

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("budget-queries-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        database = try TestStore.open(in: url.path)
    }

    func push(at time: UnixTime, status: Int?, outcome: String = "acknowledged", method: String = "PATCH") throws {
        try database.insert(
            RequestRecord(
                slug: "gh-1", run: RunKey(repository: "acme/widgets", runID: 1, attempt: 1),
                kind: method == "DELETE" ? "delete" : "update", method: method, path: "/activities/gh-1", body: "{}",
                sentAt: time, status: status, outcome: outcome, detail: nil))
    }

    @Test("a DELETE is a request, not an update: the history keeps it, the per-day count leaves it out")
    func deletionsAreNoUpdates() throws {
        let day = 1_796_083_200.0  // 2026-12-01T00:00:00Z
        try push(at: day + 10, status: 200)
        try push(at: day + 20, status: 204, method: "DELETE")
        try push(at: day + 86_400 + 10, status: 204, method: "DELETE")
        try push(at: day + 86_400 + 20, status: 200)
        // The first day counted from `pushes`, the second through the per-day table's trigger.
        let counts = try database.acknowledgedRequestsPerDay(since: day)
        #expect(counts.map(\.count) == [1, 1])
        let recorded = try database.requests(for: RunKey(repository: "acme/widgets", runID: 1, attempt: 1))
        #expect(recorded.filter { $0.method == "DELETE" }.count == 2)
    }

    func run(_ id: Int, updatedAt: UnixTime, state: String) throws {
        try database.store.run(
            """
            INSERT INTO runs (repository, run_id, attempt, status, slug, first_seen_at, updated_at, state)
            VALUES ('acme/widgets', ?, 1, 'completed', 'gh-1', ?, ?, ?)
            """, [.integer(Int64(id)), .real(updatedAt), .real(updatedAt), .text(state)])
    }

    @Test("pushes per UTC day count only 2xx answers since the start, through the time index")
    func perDay() throws {
        let day = 1_796_083_200.0  // 2026-12-01T00:00:00Z
        try push(at: day - 1, status: 200)  // before the period
        try push(at: day, status: 201)
        try push(at: day + 86_399, status: 200)
        try push(at: day + 3_600, status: 429, outcome: "rate_limited")
        try push(at: day + 3_600, status: nil, outcome: "dry-run")
        try push(at: day + 86_400 * 2 + 5, status: 200)
        let counts = try database.acknowledgedRequestsPerDay(since: day)
        #expect(counts.map(\.day) == [day, day + 2 * 86_400])
        #expect(counts.map(\.count) == [2, 1])

        guard StoreEngine.current == .sqlite else { return }
        let plan = try database.connection.query(
            "EXPLAIN QUERY PLAN SELECT COUNT(*) FROM pushes WHERE sent_at >= ? AND status BETWEEN 200 AND 299",
            [.real(day)]
        ) { $0.string(3) ?? "" }
        #expect(plan.contains { $0.contains("pushes_by_time") }, "\(plan)")
    }

    @Test("a period starting mid-day counts that day from its start only; later days come whole")
    func perDayFromMidDay() throws {
        let day = 1_796_083_200.0  // 2026-12-01T00:00:00Z
        try push(at: day + 3_600, status: 200)  // the same day, before the period
        try push(at: day + 7_200, status: 200)
        try push(at: day + 86_400 + 10, status: 200)
        try push(at: day + 86_400 + 20, status: 500, outcome: "failed")
        try push(at: day + 3 * 86_400, status: 201)
        let counts = try database.acknowledgedRequestsPerDay(since: day + 5_000)
        #expect(counts.map(\.day) == [day, day + 86_400, day + 3 * 86_400])
        #expect(counts.map(\.count) == [1, 1, 1])
        #expect(
            try database.acknowledgedRequestsPerDay(since: day + 8_000).map(\.day) == [day + 86_400, day + 3 * 86_400])
    }

    @Test("decisions since the start come oldest first with their level; the list carries each run's cost")
    func decisions() throws {
        try run(1, updatedAt: 50, state: #"{"updatesSpent":3,"cardDecision":{"level":"full","decidedAt":40}}"#)
        try run(2, updatedAt: 300, state: #"{"updatesSpent":7,"cardDecision":{"level":"steps","decidedAt":200}}"#)
        try run(3, updatedAt: 400, state: #"{"cardDecision":{"reason":"spent","decidedAt":150}}"#)
        try run(4, updatedAt: 500, state: #"{}"#)
        let decisions = try database.cardDecisions(since: 100)
        #expect(decisions.map(\.at) == [150, 200])
        #expect(decisions.map(\.level) == [nil, "steps"])

        let listed = Dictionary(uniqueKeysWithValues: try database.listRuns().map { ($0.key.runID, $0.updatesSpent) })
        #expect(listed == [1: 3, 2: 7, 3: nil, 4: nil])
    }
}
