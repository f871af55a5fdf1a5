import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// A directory for this file's databases, removed with the value.
private final class RetentionDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("bridge-retention-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Retention on a real file: each table's rule with rows on both sides of its cutoff, runs in
/// flight never touched, the last runs of every branch kept in step history, batches that stop at
/// their size and finish when repeated, the space given back, and every statement on an index.
@Suite("retention")
struct RetentionTests {
    private let directory: RetentionDirectory
    private let database: BridgeDatabase
    private static let day: UnixTime = 86_400
    /// "Now" in these tests: far enough from 0 that every cutoff is positive.
    private static let now: UnixTime = 1_000 * day

    init() throws {
        directory = try RetentionDirectory()
        database = try TestStore.open(in: directory.url.path)
    }

    // MARK: Rows

    private func delivery(_ id: String, at time: UnixTime, run: Int = 1) throws {
        try database.insert(
            DeliveryRecord(
                id: id, hookID: "1", event: "workflow_job", action: "queued", receivedAt: time,
                repository: "acme/widgets", runID: run, runAttempt: 1, outcome: .applied, reason: nil,
                contentType: "application/json", payload: Data(#"{"n":1}"#.utf8), payloadBytes: 7))
    }

    private func run(
        _ runID: Int, repository: String = "acme/widgets", attempt: Int = 1, released: Bool, updatedAt: UnixTime,
        jobs: Int = 2, pushes: Int = 2
    ) throws {
        let connection = database.store
        let key: [SQLiteValue] = [.text(repository), .int(runID), .int(attempt)]
        try connection.run(
            """
            INSERT INTO runs (repository, run_id, attempt, workflow, branch, status, slug, released, first_seen_at,
                updated_at, state)
            VALUES (?, ?, ?, 'CI', 'main', 'completed', 'gh-slug', ?, ?, ?, '{}')
            """, key + [.int(released ? 1 : 0), .real(updatedAt - 60), .real(updatedAt)])
        for job in 0..<jobs {
            try connection.run(
                "INSERT INTO jobs (repository, run_id, attempt, job_id, name, status) VALUES (?, ?, ?, ?, 'j', 'completed')",
                key + [.int(runID * 100 + job)])
        }
        for index in 0..<pushes {
            try database.insert(
                RequestRecord(
                    slug: "gh-slug", run: RunKey(repository: repository, runID: runID, attempt: attempt),
                    kind: "update", method: "PATCH", path: "/activities/gh-slug", body: "{}",
                    sentAt: updatedAt - Double(index), status: 200, outcome: "acknowledged", detail: nil))
        }
    }

    private func activity(_ slug: String, phase: String, updatedAt: UnixTime) throws {
        try database.store.run(
            "INSERT INTO activities (slug, name, phase, session, updated_at) VALUES (?, 'card', ?, '{}', ?)",
            [.text(slug), .text(phase), .real(updatedAt)])
    }

    /// A finished run's step history: `steps` rows sharing workflow, branch and finish time.
    private func history(
        _ runID: Int, repository: String = "acme/widgets", workflow: String = "CI", branch: String?,
        finishedAt: UnixTime, steps: Int = 3
    ) throws {
        for position in 0..<steps {
            try database.store.run(
                """
                INSERT INTO step_history (repository, run_id, attempt, workflow, branch, conclusion, finished_at,
                    position, step, job_count, duration)
                VALUES (?, ?, 1, ?, ?, 'success', ?, ?, ?, 1, 30)
                """,
                [
                    .text(repository), .int(runID), .text(workflow), .string(branch), .real(finishedAt),
                    .int(position), .text("step \(position)"),
                ])
        }
    }

    private func count(_ sql: String, _ arguments: [SQLiteValue] = []) throws -> Int {
        try database.store.queryOne(sql, arguments) { $0.int(0) ?? 0 } ?? 0
    }

    /// The run ids left in step history, in order.
    private func historyRuns(branch: String?, workflow: String = "CI") throws -> [Int] {
        try database.store.query(
            "SELECT DISTINCT run_id FROM step_history WHERE workflow = ? AND branch IS NOT DISTINCT FROM ? ORDER BY run_id",
            [.text(workflow), .string(branch)]
        ) { $0.int(0) ?? 0 }
    }

    // MARK: Deliveries

    @Test("delivery rows received before the cutoff go, the rest stay, and the cutoff is remembered", .onEachEngine)
    func deliveries() throws {
        let cutoff = Self.now - 30 * Self.day
        try delivery("older", at: cutoff - 1)
        try delivery("at-cutoff", at: cutoff)
        try delivery("newer", at: cutoff + 1)

        #expect(try database.retentionMark("deliveries") == nil)
        let removed = try database.pruneDeliveries(
            receivedBefore: cutoff, retention: 30 * 86_400, at: Self.now)
        #expect(removed == 1)
        #expect(try database.delivery(id: "older") == nil)
        #expect(try database.delivery(id: "at-cutoff") != nil)
        #expect(try database.delivery(id: "newer") != nil)
        let mark = try #require(try database.retentionMark("deliveries"))
        #expect(mark.before == cutoff)
        #expect(mark.retention == 30 * 86_400)
        #expect(mark.key == "retention.deliveries")
    }

    // MARK: Runs

    @Test("finished runs last updated before the cutoff go with their jobs and pushes; newer ones stay", .onEachEngine)
    func finishedRuns() throws {
        let cutoff = Self.now - 45 * Self.day
        try run(101, released: true, updatedAt: cutoff - 1)
        try run(102, released: true, updatedAt: cutoff)
        try run(103, released: true, updatedAt: cutoff + 1)
        try run(90, repository: "acme/gadgets", released: true, updatedAt: cutoff - 10)
        if StoreEngine.current == .sqlite {
            #expect(try count("PRAGMA foreign_keys") == 1, "the jobs' cascade needs foreign keys on")
        }

        let removed = try database.pruneRuns(updatedBefore: cutoff, retention: 45 * 86_400, at: Self.now)
        #expect(removed == 2)
        #expect(try count("SELECT count(*) FROM runs WHERE run_id IN (101, 90)") == 0)
        #expect(try count("SELECT count(*) FROM jobs WHERE run_id IN (101, 90)") == 0)
        #expect(try count("SELECT count(*) FROM pushes WHERE run_id IN (101, 90)") == 0)
        for kept in [102, 103] {
            #expect(try count("SELECT count(*) FROM runs WHERE run_id = ?", [.int(kept)]) == 1)
            #expect(try count("SELECT count(*) FROM jobs WHERE run_id = ?", [.int(kept)]) == 2)
            #expect(try count("SELECT count(*) FROM pushes WHERE run_id = ?", [.int(kept)]) == 2)
        }
        // Per repository, the highest run id removed: what `runs show` compares a missing id with.
        let marks = try database.prunedRunMarks(coveringRunID: 95)
        #expect(marks.map(\.repository) == ["acme/widgets"])
        #expect(marks.first?.throughRunID == 101)
        #expect(marks.first?.retention == 45 * 86_400)
        #expect(try database.prunedRunMarks(coveringRunID: 90).map(\.repository) == ["acme/gadgets", "acme/widgets"])
        #expect(try database.prunedRunMarks(coveringRunID: 102).isEmpty)
    }

    @Test("a run in flight (not released) is never pruned, however old its last update", .onEachEngine)
    func runInFlight() throws {
        try run(7, released: false, updatedAt: 1)
        try run(8, released: true, updatedAt: 1)
        #expect(try database.pruneRuns(updatedBefore: Self.now, retention: 45 * 86_400, at: Self.now) == 1)
        #expect(try database.pruneRuns(updatedBefore: Self.now, retention: 45 * 86_400, at: Self.now) == 0)
        var pass = RetentionPass()
        while try database.pruneRetention(
            &pass, settings: RetentionSettings(), payloadRetention: 3 * 86_400, at: Self.now * 10)
        {}
        #expect(try count("SELECT count(*) FROM runs WHERE run_id = 7") == 1)
        #expect(try count("SELECT count(*) FROM jobs WHERE run_id = 7") == 2)
        #expect(try count("SELECT count(*) FROM pushes WHERE run_id = 7") == 2)
        #expect(try count("SELECT count(*) FROM runs WHERE run_id = 8") == 0)
    }

    // MARK: Activities

    @Test("ended cards last updated before the cutoff go; newer ended cards and live ones stay", .onEachEngine)
    func activities() throws {
        let cutoff = Self.now - 30 * Self.day
        try activity("ended-old", phase: "ended", updatedAt: cutoff - 1)
        try activity("ended-at-cutoff", phase: "ended", updatedAt: cutoff)
        try activity("ended-new", phase: "ended", updatedAt: cutoff + 1)
        try activity("live-old", phase: "live", updatedAt: 1)
        try activity("final-old", phase: "finalShown", updatedAt: 1)

        #expect(try database.pruneActivities(endedBefore: cutoff, retention: 30 * 86_400, at: Self.now) == 1)
        let left = try database.store.query("SELECT slug FROM activities ORDER BY slug") { $0.string(0) ?? "" }
        #expect(left == ["ended-at-cutoff", "ended-new", "final-old", "live-old"])
    }

    // MARK: Step history

    @Test(
        "step history past the cutoff goes except the last 20 finished runs of each branch, a missing one too",
        .onEachEngine)
    func stepHistoryKeepsTheLastRunsOfEachBranch() throws {
        let cutoff = Self.now - 30 * Self.day
        // main: 30 old runs, the 20 newest kept whatever their age.
        for index in 0..<30 { try history(1_000 + index, branch: "main", finishedAt: cutoff - 100 + Double(index)) }
        // No branch (a tag or a deleted ref): 25 old runs, 5 go.
        for index in 0..<25 { try history(2_000 + index, branch: nil, finishedAt: cutoff - 100 + Double(index)) }
        // A quiet branch: all 20 runs long past the cutoff, all kept.
        for index in 0..<20 { try history(3_000 + index, branch: "quiet", finishedAt: 1 + Double(index)) }
        // Busy: 5 old runs and 25 recent ones; the old go, the recent stay though more than 20.
        for index in 0..<5 { try history(4_000 + index, branch: "busy", finishedAt: cutoff - 10 + Double(index)) }
        for index in 0..<25 { try history(4_100 + index, branch: "busy", finishedAt: cutoff + Double(index)) }
        // Another workflow on main: a group of its own, 21 old runs, the oldest goes.
        for index in 0..<21 {
            try history(5_000 + index, workflow: "Deploy", branch: "main", finishedAt: cutoff - 50 + Double(index))
        }
        // The run exactly at the cutoff is not before it.
        try history(6_000, branch: "edge", finishedAt: cutoff)
        for index in 0..<20 { try history(6_001 + index, branch: "edge", finishedAt: cutoff + 1 + Double(index)) }

        var cursor: RetentionPass.StepHistoryCursor?
        var pruned = 0
        var batches = 0
        while true {
            let batch = try database.pruneStepHistory(
                finishedBefore: cutoff, retention: 30 * 86_400, cursor: &cursor, at: Self.now, limit: 7)
            pruned += batch.pruned
            batches += 1
            #expect(batch.examined <= 7)
            if batch.examined < 7 { break }
        }
        #expect(pruned == 10 + 5 + 0 + 5 + 1)
        #expect(batches > 1)
        #expect(try historyRuns(branch: "main") == Array(1_010..<1_030))
        #expect(try historyRuns(branch: nil) == Array(2_005..<2_025))
        #expect(try historyRuns(branch: "quiet") == Array(3_000..<3_020))
        #expect(try historyRuns(branch: "busy") == Array(4_100..<4_125))
        #expect(try historyRuns(branch: "main", workflow: "Deploy") == Array(5_001..<5_021))
        #expect(try historyRuns(branch: "edge") == Array(6_000..<6_021))
        // Every step of a pruned run went, none of a kept one.
        #expect(try count("SELECT count(*) FROM step_history WHERE run_id = 1000") == 0)
        #expect(try count("SELECT count(*) FROM step_history WHERE run_id = 1010") == 3)

        // Caught up: the same cutoff again looks at nothing behind the cursor.
        let again = try database.pruneStepHistory(
            finishedBefore: cutoff, retention: 30 * 86_400, cursor: &cursor, at: Self.now, limit: 7)
        #expect(again.examined == 0)
        // A newer run on the quiet branch makes its oldest prunable: found when the scan starts over.
        try history(3_100, branch: "quiet", finishedAt: Self.now)
        var fresh: RetentionPass.StepHistoryCursor?
        let rescan = try database.pruneStepHistory(
            finishedBefore: cutoff, retention: 30 * 86_400, cursor: &fresh, at: Self.now, limit: 1_000)
        #expect(rescan.pruned == 1)
        #expect(try historyRuns(branch: "quiet") == Array(3_001..<3_020) + [3_100])
    }

    @Test("runs finishing at the same time are all visited when a batch boundary falls between them", .onEachEngine)
    func stepHistoryTies() throws {
        // 30 runs on one branch, three at each finish time, all old: the 10 oldest go, and with
        // batches of 2 the cursor must not skip a run that shares its time with the last one seen.
        for index in 0..<30 { try history(100 + index, branch: "main", finishedAt: Double(1 + index / 3)) }
        var cursor: RetentionPass.StepHistoryCursor?
        var examined = 0
        while true {
            let batch = try database.pruneStepHistory(
                finishedBefore: Self.now, retention: 86_400, cursor: &cursor, at: Self.now, limit: 2)
            examined += batch.examined
            if batch.examined < 2 { break }
        }
        #expect(examined == 30)
        // 106–108 have 21 newer runs and go; 109–111 share a time and have 18 newer, so all three
        // stay: at least 20 are kept, never fewer.
        #expect(try historyRuns(branch: "main") == Array(109..<130))
    }

    @Test("the step-history scan starts over a day later, and only once caught up", .onEachEngine)
    func stepHistoryRescan() throws {
        let settings = RetentionSettings()
        for index in 0..<20 { try history(100 + index, branch: "quiet", finishedAt: 1 + Double(index)) }
        var pass = RetentionPass()
        #expect(try !database.pruneRetention(&pass, settings: settings, payloadRetention: 3 * 86_400, at: Self.now))
        #expect(pass.stepHistoryCaughtUp)
        let cursor = try #require(pass.stepHistoryCursor)
        #expect(cursor.finishedAt == 20)
        try history(200, branch: "quiet", finishedAt: Self.now)
        // An hour later the cursor holds: the kept runs behind it are not looked at again.
        #expect(
            try !database.pruneRetention(&pass, settings: settings, payloadRetention: 3 * 86_400, at: Self.now + 3_600))
        #expect(pass.stepHistoryRuns == 0)
        #expect(pass.stepHistoryCursor == cursor)
        // A day later the scan starts over and finds the run the newer one pushed out.
        #expect(
            try !database.pruneRetention(&pass, settings: settings, payloadRetention: 3 * 86_400, at: Self.now + 86_400)
        )
        #expect(pass.stepHistoryRuns == 1)
        #expect(try historyRuns(branch: "quiet") == Array(101..<120) + [200])
    }

    // MARK: Batches

    @Test("a call prunes at most the batch size per table, and repeated calls finish", .onEachEngine)
    func batches() throws {
        let old = Self.now - 400 * Self.day
        for index in 0..<12 { try delivery("d\(index)", at: old + Double(index)) }
        for index in 0..<12 { try run(index + 1, released: true, updatedAt: old) }
        for index in 0..<12 { try activity("card-\(index)", phase: "ended", updatedAt: old) }
        // 40 runs on one branch: 20 go.
        for index in 0..<40 { try history(500 + index, branch: "main", finishedAt: old + Double(index)) }

        var pass = RetentionPass()
        var calls = 0
        var more = true
        while more {
            let before = (
                try count("SELECT count(*) FROM deliveries"), try count("SELECT count(*) FROM runs"),
                try count("SELECT count(*) FROM activities"),
                try count("SELECT count(DISTINCT run_id) FROM step_history")
            )
            more = try database.pruneRetention(
                &pass, settings: RetentionSettings(), payloadRetention: 3 * 86_400, at: Self.now, limit: 5)
            calls += 1
            #expect(before.0 - (try count("SELECT count(*) FROM deliveries")) <= 5)
            #expect(before.1 - (try count("SELECT count(*) FROM runs")) <= 5)
            #expect(before.2 - (try count("SELECT count(*) FROM activities")) <= 5)
            #expect(before.3 - (try count("SELECT count(DISTINCT run_id) FROM step_history")) <= 5)
            #expect(calls < 50, "retention never finished")
            if calls >= 50 { break }
        }
        // 40 step-history runs looked at 5 a call: 8 full calls and a last one that finds none.
        #expect(calls == 9)
        #expect(pass.deliveries == 12)
        #expect(pass.payloads == 12)
        #expect(pass.runs == 12)
        #expect(pass.activities == 12)
        #expect(pass.stepHistoryRuns == 20)
        #expect(pass.removedAnything)
        #expect(try count("SELECT count(*) FROM deliveries") == 0)
        #expect(try count("SELECT count(*) FROM jobs") == 0)
        #expect(try count("SELECT count(*) FROM pushes") == 0)
        pass.startNext()
        #expect(!pass.removedAnything)
        #expect(pass.stepHistoryCursor != nil)
    }

    // MARK: Space

    @Test("a new database uses incremental auto_vacuum, and free pages past the reserve go back")
    func incrementalVacuum() throws {
        #expect(try count("PRAGMA auto_vacuum") == 2)
        let filler = String(repeating: "x", count: 3_000)
        try database.connection.transaction {
            for index in 0..<2_000 {
                try database.connection.run(
                    "INSERT INTO activities (slug, name, phase, session, updated_at) VALUES (?, ?, 'ended', '{}', 1)",
                    [.text("card-\(index)"), .text(filler)])
            }
        }
        while try database.pruneActivities(endedBefore: Self.now, retention: 86_400, at: Self.now) > 0 {}
        let free = try database.freePages()
        #expect(free > 1_000)
        let pageCount = try count("PRAGMA page_count")

        // Within the reserve nothing moves.
        #expect(try database.releaseFreePages(reserveBytes: 1 << 30).pages == 0)
        #expect(try database.freePages() == free)
        // Past it, one bounded step at a time, down to the reserve.
        let step = try database.releaseFreePages(reserveBytes: 100 * 4_096, atMost: 300)
        #expect(step.pages == 300)
        #expect(step.more)
        while try database.releaseFreePages(reserveBytes: 100 * 4_096, atMost: 300).more {}
        #expect(try database.freePages() == 100)
        // The file shrank by the pages given back (and the pointer-map pages that tracked them).
        let shrunk = pageCount - (try count("PRAGMA page_count"))
        #expect(shrunk >= free - 100, "\(shrunk) of \(free - 100)")
        #expect(shrunk <= free, "\(shrunk) of \(free - 100)")
    }

    @Test("a database from before keeps auto_vacuum NONE: nothing is given back, nothing rewritten")
    func existingDatabaseKeepsItsVacuumMode() throws {
        let path = directory.path("old.sqlite")
        do {
            // As an older build created it: tables first, so the setting can no longer change.
            let connection = try SQLiteConnection(path: path)
            try MigrationRunner.migrate(connection, Array(BridgeSchema.migrations.prefix(5)))
            connection.close()
        }
        let upgraded = try BridgeDatabase(path: path)
        #expect(try upgraded.connection.queryOne("PRAGMA auto_vacuum") { $0.int(0) } == 0)
        let released = try upgraded.releaseFreePages(reserveBytes: 0)
        #expect(released.pages == 0)
        #expect(!released.more)
    }

    // MARK: Plans

    @Test("every pruning statement is served by an index: no scan of a table")
    func queryPlans() throws {
        let tables = ["deliveries", "runs", "jobs", "pushes", "activities", "step_history"]
        for sql in BridgeDatabase.retentionStatements {
            // Unbound parameters: the plan does not depend on their values.
            let parameters = [SQLiteValue](repeating: .null, count: sql.filter { $0 == "?" }.count)
            let plan = try database.connection.query("EXPLAIN QUERY PLAN " + sql, parameters) { $0.string(3) ?? "" }
            #expect(!plan.isEmpty, "\(sql)")
            for line in plan {
                let scansTable = tables.contains { line == "SCAN \($0)" || line.hasPrefix("SCAN \($0) ") }
                #expect(!scansTable, "\(sql): \(line)")
            }
            #expect(plan.contains { $0.contains("USING") }, "\(sql): \(plan)")
        }
        // Payloads are found among the rows that still have one, not among every old delivery.
        let payloads = try #require(BridgeDatabase.retentionStatements.first { $0.contains("SET payload = NULL") })
        let plan = try database.connection.query("EXPLAIN QUERY PLAN " + payloads, [.null, .null]) {
            $0.string(3) ?? ""
        }
        #expect(plan.contains { $0.contains("deliveries_with_payload") }, "\(plan)")
    }

    // MARK: Migration

    @Test("migrating reports each migration applied, with its place and time; an up-to-date one reports none")
    func migrationProgress() throws {
        let path = directory.path("progress.sqlite")
        var reports: [MigrationProgress] = []
        _ = try BridgeDatabase(path: path) { reports.append($0) }
        let total = BridgeSchema.migrations.count
        #expect(reports.count == 2 * total)
        #expect(reports.filter { $0.elapsed == nil }.map(\.version) == Array(1...total))
        #expect(reports.compactMap(\.elapsed).allSatisfy { $0 >= 0 })
        #expect(reports.allSatisfy { $0.total == total })
        #expect(reports.last?.name == BridgeSchema.migrations.last?.name)
        var again: [MigrationProgress] = []
        _ = try BridgeDatabase(path: path) { again.append($0) }
        #expect(again.isEmpty)
    }
}
