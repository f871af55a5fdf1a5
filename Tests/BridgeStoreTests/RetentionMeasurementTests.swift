import BridgeCore
import BridgeStore
import Foundation
import Testing

/// How long retention batches take on a database with a few hundred thousand rows: run with
/// `PUSHWARD_RETENTION_MEASURE=1 swift test --filter RetentionMeasurement`. Off by default, since
/// filling the database takes longer than the rest of the suite; the figures go to standard output.
@Suite("retention measurement", .enabled(if: ProcessInfo.processInfo.environment["PUSHWARD_RETENTION_MEASURE"] != nil))
struct RetentionMeasurementTests {
    private static let day: UnixTime = 86_400

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    @Test("batches stay short on a large database, and kept step history is not walked again")
    func measure() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("retention-measure-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Filled at the schema before the retention migration, so its upgrade is timed too.
        let path = directory.appendingPathComponent("big.sqlite").path
        let retentionMigration = "prune by age through indexes, and remember what retention removed"
        let connection = try SQLiteConnection(path: path)
        try MigrationRunner.migrate(
            connection, Array(BridgeSchema.migrations.prefix { $0.name != retentionMigration }))
        let now: UnixTime = 2_000 * Self.day
        let runs = 100_000
        let branches = 2_000
        let steps = 3
        let clock = ContinuousClock()

        // 100,000 finished runs over 100 days, 3 deliveries, 3 jobs, 3 pushes and 3 steps each,
        // spread over 2,000 branches of 10 repositories (most branches quiet: 50 runs each).
        let fill = clock.measure {
            try? connection.transaction {
                for index in 0..<runs {
                    let at = now - 100 * Self.day + Double(index) * (100 * Self.day / Double(runs))
                    let repository = "acme/repo-\(index % 10)"
                    let branch: String? = index % 97 == 0 ? nil : "branch-\(index % branches)"
                    let key: [SQLiteValue] = [.text(repository), .int(index), .int(1)]
                    try connection.run(
                        """
                        INSERT INTO runs (repository, run_id, attempt, workflow, branch, status, slug, released,
                            first_seen_at, updated_at, state)
                        VALUES (?, ?, ?, 'CI', ?, 'completed', 'gh-slug', 1, ?, ?, '{}')
                        """, key + [.string(branch), .real(at), .real(at)])
                    for part in 0..<3 {
                        try connection.run(
                            """
                            INSERT INTO deliveries (id, event, received_at, repository, run_id, run_attempt, outcome,
                                payload_bytes, payload)
                            VALUES (?, 'workflow_job', ?, ?, ?, 1, 'applied', 200, ?)
                            """,
                            [
                                .text("d-\(index)-\(part)"), .real(at), .text(repository), .int(index),
                                .blob(Data(repeating: 0x7B, count: 200)),
                            ])
                        try connection.run(
                            "INSERT INTO jobs (repository, run_id, attempt, job_id, name, status) VALUES (?, ?, ?, ?, 'j', 'completed')",
                            key + [.int(index * 10 + part)])
                        try connection.run(
                            """
                            INSERT INTO pushes (slug, repository, run_id, attempt, kind, method, path, body, sent_at,
                                status, outcome)
                            VALUES ('gh-slug', ?, ?, ?, 'update', 'PATCH', '/a', '{}', ?, 200, 'acknowledged')
                            """, key + [.real(at)])
                    }
                    for position in 0..<steps {
                        try connection.run(
                            """
                            INSERT INTO step_history (repository, run_id, attempt, workflow, branch, conclusion,
                                finished_at, position, step, job_count, duration)
                            VALUES (?, ?, ?, 'CI', ?, 'success', ?, ?, 'step', 1, 30)
                            """, key + [.string(branch), .real(at), .int(position)])
                    }
                }
            }
        }
        connection.close()
        let database = try BridgeDatabase(path: path) { progress in
            if let elapsed = progress.elapsed {
                print(
                    "retention measurement: migration \(progress.version)/\(progress.total) '\(progress.name)' "
                        + "took \(elapsed) s")
            }
        }
        // As in the daemon: WAL checkpoints on their own thread, not inside a batch's commit.
        let checkpointer = try database.startCheckpointer { message in print("checkpoint failed: \(message)") }
        defer { checkpointer.stop() }
        let stepRows = try database.connection.queryOne("SELECT count(*) FROM step_history") { $0.int(0) ?? 0 } ?? 0
        print("retention measurement: filled \(runs) runs, \(stepRows) step rows in \(Self.seconds(fill)) s")

        // One batch of each table alone, for where the time goes.
        var batchTimes: [String: [Double]] = [:]
        for _ in 0..<20 {
            var start = clock.now
            try database.pruneDeliveries(receivedBefore: now - 30 * Self.day, retention: 30 * 86_400, at: now)
            batchTimes["deliveries", default: []].append(Self.seconds(clock.now - start))
            start = clock.now
            try database.pruneRuns(updatedBefore: now - 45 * Self.day, retention: 45 * 86_400, at: now)
            batchTimes["runs", default: []].append(Self.seconds(clock.now - start))
        }
        var cursor: RetentionPass.StepHistoryCursor?
        for _ in 0..<20 {
            let start = clock.now
            _ = try database.pruneStepHistory(
                finishedBefore: now - 30 * Self.day, retention: 30 * 86_400, cursor: &cursor, at: now)
            batchTimes["step_history", default: []].append(Self.seconds(clock.now - start))
        }
        for (table, times) in batchTimes.sorted(by: { $0.key < $1.key }) {
            let sorted = times.sorted()
            print(
                "retention measurement: \(table) batch of \(BridgeDatabase.retentionBatchSize): median "
                    + "\(sorted[sorted.count / 2] * 1_000) ms, max \((sorted.last ?? 0) * 1_000) ms")
        }

        var settings = RetentionSettings()
        settings.deliveries = 30 * 86_400
        settings.runs = 45 * 86_400
        settings.stepHistory = 30 * 86_400
        var pass = RetentionPass()
        var timings: [Double] = []
        var more = true
        let total = try clock.measure {
            while more {
                let start = clock.now
                more = try database.pruneRetention(&pass, settings: settings, payloadRetention: 3 * 86_400, at: now)
                timings.append(Self.seconds(clock.now - start))
            }
        }
        let sorted = timings.sorted()
        print(
            "retention measurement: first pass \(timings.count) calls in \(Self.seconds(total)) s; per call median "
                + "\(sorted[sorted.count / 2] * 1_000) ms, p95 \(sorted[sorted.count * 95 / 100] * 1_000) ms, max "
                + "\((sorted.last ?? 0) * 1_000) ms; removed \(pass.payloads) payloads, \(pass.deliveries) deliveries, \(pass.runs) runs, "
                + "\(pass.stepHistoryRuns) step-history runs")
        #expect(pass.runs > 0 && pass.deliveries > 0 && pass.stepHistoryRuns > 0)

        // A second pass a few minutes later: the cursor is at the cutoff, nothing kept is walked.
        pass.startNext()
        var secondCalls = 0
        let second = try clock.measure {
            while try database.pruneRetention(
                &pass, settings: settings, payloadRetention: 3 * 86_400, at: now + 600)
            {
                secondCalls += 1
            }
        }
        print("retention measurement: next pass (10 min later) \(secondCalls + 1) calls in \(Self.seconds(second)) s")
        // The rescan a day later looks at every kept old run once more.
        pass.startNext()
        var rescanCalls = 0
        let rescan = try clock.measure {
            while try database.pruneRetention(
                &pass, settings: settings, payloadRetention: 3 * 86_400, at: now + 86_400)
            {
                rescanCalls += 1
            }
        }
        print("retention measurement: daily rescan \(rescanCalls + 1) calls in \(Self.seconds(rescan)) s")
    }
}
