import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// Every read the CLI, the admin API and the status page make is served by an index: with a year
/// of runs stored, a full scan or a sort of a growing table would turn a page load into seconds.
///
/// The statements checked are the ones the code really prepares (`SQLiteConnection.statementObserver`
/// records them while each public read method and the status page's snapshot run), not a copy of
/// their SQL kept here, so a query changed in the code is checked as it now is. A public read
/// method added to the query files and not called below fails `everyReadMethodIsCalled`.
@Suite("query plans")
struct QueryPlanTests {
    /// Tables with a row per delivery, run, job, request or finished step: they grow with history.
    static let growingTables: Set<String> = [
        "deliveries", "runs", "jobs", "pushes", "step_history", "activities", "alerts", "recovery_requests",
        "action_tokens", "actions",
    ]

    /// The files holding each table's statements; each `public func` in them must be in `readers`
    /// or `writers`.
    static let queryFiles = [
        "DeliveryRecord.swift", "RequestRecord.swift", "StoredRun.swift", "StoredSession.swift", "RunListing.swift",
        "AlertRecord.swift", "RecoveryRecord.swift", "ActionRecord.swift", "StoredWidget.swift",
    ]

    /// The public methods of `queryFiles` that write (each on the primary key or an append).
    static let writers: Set<String> = [
        "insert", "recordDuplicate", "startAlertAttempt", "finishAlertAttempt", "recordSweep", "recordRecoveryRequest",
        "recordGivenUp", "insertActionToken", "spendActionToken", "spendActionTokens", "insertAction", "finishAction",
        "interruptRequestedActions", "pruneActionTokens", "pruneActions", "saveWidget",
    ]

    static let run = RunKey(repository: "acme/widgets", runID: 1, attempt: 1)

    /// Each public read method, by name, called with every shape of arguments its callers use (a
    /// filter or none, a payload or none): each shape is a different SQL text.
    static let readers: [String: @Sendable (BridgeDatabase) throws -> Void] = [
        "listRuns": { database in
            _ = try database.listRuns()
            _ = try database.listRuns(repository: run.repository, limit: 5)
        },
        "runAttempts": { _ = try $0.runAttempts(runID: run.runID) },
        "session": { _ = try $0.session(slug: "gh-1") },
        "requests": { _ = try $0.requests(for: run) },
        "listDeliveries": { database in
            _ = try database.listDeliveries()
            _ = try database.listDeliveries(limit: 5, includePayload: true)
            _ = try database.listDeliveries(run: run, limit: 500)
            _ = try database.listDeliveries(run: run, limit: 500, includePayload: true)
        },
        "delivery": { _ = try $0.delivery(id: "d-1") },
        "hasDelivery": { _ = try $0.hasDelivery("d-1") },
        "dueAlerts": { _ = try $0.dueAlerts(at: 1_800_000_000) },
        "nextAlertDue": { _ = try $0.nextAlertDue() },
        "alerts": { _ = try $0.alerts(repository: run.repository, runID: run.runID) },
        "storedRun": { _ = try $0.storedRun(run) },
        "acknowledgedRequestsPerDay": { _ = try $0.acknowledgedRequestsPerDay(since: 0) },
        "cardDecisions": { _ = try $0.cardDecisions(since: 0) },
        "examinedThrough": { _ = try $0.examinedThrough(hook: "repos/acme/widgets/hooks/1") },
        "storedDeliveries": { _ = try $0.storedDeliveries(["d-1", "d-2"]) },
        "recoveryRequests": { _ = try $0.recoveryRequests(["d-1"]) },
        "recentRecoveryRequests": { _ = try $0.recentRecoveryRequests() },
        "liveActionToken": { _ = try $0.liveActionToken(selector: "abcdefghijkl", at: 1_800_000_000) },
        "liveTokenExpiry": { _ = try $0.liveTokenExpiry(.cancel, run: run, at: 1_800_000_000) },
        "hasNewerAttempt": { _ = try $0.hasNewerAttempt(than: run) },
        "requestedActions": { _ = try $0.requestedActions() },
        "actions": { _ = try $0.actions(repository: run.repository, runID: run.runID) },
        "recentActions": { _ = try $0.recentActions() },
        "widgets": { _ = try $0.widgets() },
    ]

    let directory: URL
    let path: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("query-plans-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("bridge.sqlite").path
        try Self.fill(BridgeDatabase(path: path))
    }

    /// A few runs through the engine (real run states, cards and history), with their deliveries
    /// and requests, so every read below finds rows and the status page walks its whole loop.
    /// Plans do not depend on the row counts here: no `ANALYZE` figures exist, so SQLite plans as
    /// it would for large tables.
    static func fill(_ database: BridgeDatabase) throws {
        var settings = ActivitySettings()
        settings.endDelay = 0
        settings.endDisplayTime = 0
        settings.minUpdateInterval = 0
        var engine = BridgeEngine(settings: settings)
        let waves: [[RunScript.Job]] = [[RunScript.Job("lint", duration: 20)], [RunScript.Job("test", duration: 60)]]
        var now: UnixTime = 1_800_000_000
        let scripts = [
            RunScript(runID: 1, runNumber: 1, firstJobID: 100).deliveries(waves: waves),
            RunScript(runID: 2, runNumber: 2, firstJobID: 200).deliveries(waves: waves, complete: false),
        ]
        for (index, event) in scripts.joined().enumerated() {
            now += 1
            _ = engine.receive(event, at: now)
            for slug in engine.sessions.keys.sorted() {
                if case .send(let planned) = engine.decide(slug: slug, at: now) { engine.acknowledge(planned, at: now) }
            }
            let changes = engine.takeChanges()
            try database.connection.transaction {
                try database.save(engine.rows(for: changes, at: now), at: now)
                try database.insert(
                    DeliveryRecord(
                        id: "d-\(index + 1)", hookID: "1", event: "workflow_job", action: "queued", receivedAt: now,
                        repository: run.repository, runID: run.runID, runAttempt: 1, outcome: .applied, reason: nil,
                        contentType: "application/json", payload: Data("{}".utf8), payloadBytes: 2))
                try database.insert(
                    RequestRecord(
                        slug: "gh-1", run: run, kind: "update", method: "PATCH", path: "/activities/gh-1", body: "{}",
                        sentAt: now, status: 200, outcome: "acknowledged", detail: nil))
            }
        }
    }

    /// Runs `body` on a read-only instance (as the CLI and the admin listener open it) and returns
    /// the SQL texts it prepared, in order, each once.
    func recorded(_ body: (BridgeDatabase) throws -> Void) throws -> [String] {
        let database = try BridgeDatabase(path: path, readOnly: true)
        let statements = StatementLog()
        database.connection.statementObserver = { statements.append($0) }
        try body(database)
        database.connection.statementObserver = nil
        return statements.texts
    }

    @Test("every public read method of the table files is called here")
    func everyReadMethodIsCalled() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/BridgeStore/Bridge")
        let declaration = try Regex(#"public\s+func\s+(\w+)"#)
        var declared: Set<String> = []
        for file in Self.queryFiles {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: declaration) {
                if let name = match.output[1].substring { declared.insert(String(name)) }
            }
        }
        #expect(!declared.isEmpty)
        let missing = declared.subtracting(Self.readers.keys).subtracting(Self.writers)
        #expect(missing.isEmpty, "read methods not checked by QueryPlanTests.readers: \(missing.sorted())")
    }

    @Test("every read the CLI, the admin API and the status page run is served by an index")
    func everyReadIsIndexed() throws {
        var statements: [String] = []
        for name in Self.readers.keys.sorted() {
            let texts = try recorded { try Self.readers[name]?($0) }
            #expect(!texts.isEmpty, "\(name) prepared no statement")
            statements += texts
        }
        let page = try recorded { database in
            let snapshot = try StatusSnapshot.read(from: database, at: 1_800_000_100)
            #expect(snapshot.runs.count == 2)
            #expect(try RunDocument.json(database: database, runID: Self.run.runID) != nil)
        }
        statements += page
        let plans = try BridgeDatabase(path: path, readOnly: true)
        var checked: Set<String> = []
        for sql in statements where checked.insert(sql).inserted {
            let plan = try plans.connection.queryPlan(of: sql)
            for problem in Self.problems(plan: plan, sql: sql) {
                Issue.record("\(problem)\n  in: \(sql)\n  plan:\n\(plan.joined(separator: "\n"))")
            }
        }
        // The reads of every method above, and the same set the status page and a run's document
        // read through (nothing they run escapes the check).
        #expect(checked.count >= Self.readers.count)
        #expect(Set(page).isSubset(of: checked))
    }

    @Test("the check catches the unindexed run list it replaced")
    func checkCatchesASort() throws {
        let sql = try recorded { _ = try $0.listRuns() }
        let old = try SQLiteConnection(path: ":memory:")
        let ours = "serve every read of the CLI, admin API and status page from an index"
        let before = Array(BridgeSchema.migrations.prefix { $0.name != ours })
        #expect(before.count < BridgeSchema.migrations.count)
        try MigrationRunner.migrate(old, before)
        let plan = try old.queryPlan(of: try #require(sql.first))
        let problems = Self.problems(plan: plan, sql: sql[0])
        #expect(problems.contains { $0.contains("USE TEMP B-TREE FOR ORDER BY") }, "\(plan)")
    }

    @Test("a full scan of a growing table, through its alias, is caught; a seek is not")
    func checkReadsAliases() throws {
        let sql = "SELECT r.slug FROM runs r LEFT JOIN activities a ON a.slug = r.slug WHERE r.workflow = ?"
        let database = try BridgeDatabase(path: path, readOnly: true)
        let problems = Self.problems(plan: try database.connection.queryPlan(of: sql), sql: sql)
        #expect(problems.contains { $0.contains("full scan of runs") }, "\(problems)")
        #expect(!problems.contains { $0.contains("activities") }, "\(problems)")
    }

    // MARK: The rules

    /// What is wrong with `plan` (lines of `SQLiteConnection.queryPlan`) for `sql`, one sentence
    /// each naming the plan line: a growing table scanned without an index, or walked through a
    /// whole index without a LIMIT to stop it; a sort of rows in a temporary B-tree for ORDER BY;
    /// an automatic index SQLite builds by scanning the table.
    static func problems(plan: [String], sql: String) -> [String] {
        let tables = tableNames(in: sql)
        let limited = sql.range(of: #"\bLIMIT\b"#, options: [.regularExpression, .caseInsensitive]) != nil
        var problems: [String] = []
        for line in plan.map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("SCAN ") {
                let name = line.split(separator: " ").dropFirst().first.map(String.init) ?? ""
                guard let table = tables[name.lowercased()], growingTables.contains(table) else { continue }
                if !line.contains(" USING ") {
                    problems.append("full scan of \(table): '\(line)'")
                } else if !limited {
                    problems.append("walks all of \(table)'s index with no LIMIT to stop it: '\(line)'")
                }
            }
            if line.contains("USE TEMP B-TREE FOR ORDER BY")
                || line.contains("USE TEMP B-TREE FOR RIGHT PART OF ORDER BY")
            {
                problems.append("sorts its rows instead of reading them in index order: '\(line)'")
            }
            if line.contains("AUTOMATIC") {
                problems.append("builds a temporary index by scanning: '\(line)'")
            }
        }
        return problems
    }

    /// The tables a statement reads, by the names its plan uses for them: the table's own name and
    /// its alias (`FROM runs r` reads as `SCAN r`), lowercased.
    static func tableNames(in sql: String) -> [String: String] {
        let keywords: Set<String> = [
            "where", "left", "right", "inner", "outer", "cross", "join", "on", "order", "group", "limit", "using",
            "natural", "union", "except", "intersect", "as", "indexed", "not", "window", "having",
        ]
        var names: [String: String] = [:]
        let words = sql.lowercased().split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init)
        for (index, word) in words.enumerated() where word == "from" || word == "join" {
            guard index + 1 < words.count else { continue }
            let table = words[index + 1]
            names[table] = table
            var next = index + 2
            if next < words.count, words[next] == "as" { next += 1 }
            if next < words.count, !keywords.contains(words[next]) { names[words[next]] = table }
        }
        return names
    }
}

/// Collects SQL texts from the connection's observer, which runs on the test's own thread.
private final class StatementLog {
    private(set) var texts: [String] = []

    func append(_ sql: String) {
        if !texts.contains(sql) { texts.append(sql) }
    }
}
