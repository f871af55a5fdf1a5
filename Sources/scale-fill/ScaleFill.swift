import BridgeCore
import BridgeDaemon
import BridgeStore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Fills a database with finished workflow runs through the daemon's own store path, on a
/// simulated clock: each delivery is built as the HTTP thread builds it (`IncomingDelivery`:
/// the same decoder, the same compression), committed in groups by `BridgeService.ingest` as the
/// ingest queue commits them, the requests the core plans are completed as the dry-run dispatcher
/// completes them, and `pruneRetention(at:)` runs every 10 simulated minutes as the daemon runs it
/// (`pruneEvery`).
/// Only HTTP and the signature check are skipped: they cost the daemon per request, not per
/// stored row, and at 3 deliveries per run a million runs over loopback would take most of an hour.
///
/// Runs start evenly over `days` days ending at `end` (with jitter), spread over `repositories`
/// repositories, 5 workflows and 8 branches; each is `workflow_run` requested, one
/// `workflow_job` completed 1 to 10 minutes later, then `workflow_run` completed, delivered in
/// time order across runs. One run in ten fails.
struct ScaleFill {
    struct Options {
        var database: String
        var templates: String
        var runs: Int
        var days: Double = 90
        var repositories: Int = 300
        var end: UnixTime = Date().timeIntervalSince1970
        /// Deliveries per commit: the ingest queue's largest group.
        var groupSize: Int = 64
        /// One line per simulated day: database and WAL size.
        var sizesCSV: String?
        /// Simulated seconds between retention passes: 600, as the daemon's loop; 0 never prunes.
        var pruneEvery: Double = 600
        /// Offsets run and job ids, so fills into one database (or a fill and a soak) never collide.
        var firstRun: Int = 0
    }

    /// One line of the per-day table.
    struct Day: Codable {
        var day: Int
        var runs: Int
        var databaseBytes: Int
        var walBytes: Int
    }

    struct Summary: Codable {
        var runs: Int
        var deliveries: Int
        var seconds: Double
        var runsPerSecond: Double
        var deliveriesPerSecond: Double
        var statuses: [String: Int]
        var requestsCompleted: Int
        var databaseBytes: Int
        var walBytes: Int
        var maxResidentKB: Int
        var start: UnixTime
        var end: UnixTime
        var days: [Day]
    }

    /// A delivery due at `time`; `order` keeps a run's own deliveries in order when times tie.
    private struct Pending {
        var time: UnixTime
        var order: Int
        var event: String
        var shape: String
        var values: [String: String]
    }

    static let workflows = ["CI", "Tests", "Lint", "Release", "Nightly"]
    static let jobs = ["build", "test", "lint", "package", "e2e"]
    static let branches = [
        "main", "main", "main", "develop", "release/2026.11", "feature/search", "feature/billing", "dependabot/npm",
    ]
    static let shapes = ["run.requested", "job.completed", "run.completed"]

    let options: Options
    private let templates: [String: PayloadTemplate]
    private var random: UInt64 = 0x5eed_5ca1_e000_0001

    init(options: Options) throws {
        self.options = options
        let data = try Data(contentsOf: URL(fileURLWithPath: options.templates))
        guard let texts = try JSONSerialization.jsonObject(with: data) as? [String: String] else {
            throw FillError("\(options.templates): not a JSON object of strings (bench/gen.py --scale-templates)")
        }
        var templates: [String: PayloadTemplate] = [:]
        let known: Set<String> = [
            "REPO", "REPONAME", "REPOID", "RUN", "RUNNUM", "JOB", "JOBNAME", "WF", "BRANCH", "CONCLUSION", "T0", "T1",
            "T2",
        ]
        for shape in Self.shapes {
            guard let text = texts[shape] else { throw FillError("\(options.templates): no '\(shape)' template") }
            let template = PayloadTemplate(text)
            let unknown = template.fields.subtracting(known)
            guard unknown.isEmpty else { throw FillError("'\(shape)' has unknown placeholders \(unknown.sorted())") }
            templates[shape] = template
        }
        self.templates = templates
    }

    /// Runs the fill; progress goes to standard error.
    mutating func run() async throws -> Summary {
        let configuration = try BridgeConfiguration(
            json: Data(
                """
                {"listen": "127.0.0.1:0", "database": \(Self.quoted(options.database)),
                 "github": {"webhook_secrets": ["scale-fill"]}, "pushward": {"api_key": ""}}
                """.utf8))
        let logger = Logger(label: "scale-fill", minimumLevel: .warning)
        let span = options.days * 86_400
        let start = options.end - span
        let spacing = span / Double(max(options.runs, 1))
        let service: BridgeService
        do {
            let database = try BridgeDatabase(path: options.database)
            let engine = try database.loadEngine(configuration: configuration.engineConfiguration, at: start)
            service = BridgeService(database: database, engine: engine, configuration: configuration, logger: logger)
        }
        let transport = DryRunTransport()

        var pending: [Pending] = []
        var group: [IncomingDelivery] = []
        var statuses: [String: Int] = [:]
        var delivered = 0
        var completed = 0
        var days: [Day] = []
        var runNumbers: [Int: Int] = [:]
        var now = start
        var nextPrune = options.pruneEvery > 0 ? start + options.pruneEvery : .infinity
        var nextDay = start + 86_400
        var nextForget = start + 30
        var runsStarted = 0
        let began = Date()
        var lastProgress = began

        // Commits the group (if any), then does what the daemon does between groups: the
        // dispatcher's turn (every due request completed as dry-run) and, when due, retention.
        func commit() async {
            if !group.isEmpty {
                for result in await service.ingest(group) { statuses[String(result.status), default: 0] += 1 }
                delivered += group.count
                group.removeAll(keepingCapacity: true)
            }
            for _ in 0..<1_000 {
                let due = await service.dueRequests(at: now)
                if due.isEmpty { break }
                for planned in due {
                    let answer = await transport.send(planned.request)
                    await service.complete(planned, answer: answer, dryRun: true, at: now)
                    completed += 1
                }
            }
            // As the daemon's half-minute task does: finished runs leave memory.
            if now >= nextForget {
                await service.forgetFinished(at: now)
                nextForget = now + 30
            }
            if now >= nextPrune {
                await prune(service, at: now)
                nextPrune = now + options.pruneEvery
            }
            while now >= nextDay {
                days.append(sizes(day: days.count + 1, runs: runsStarted))
                nextDay += 86_400
            }
        }

        // Kept in time order by inserting in place: a few hundred deliveries are pending at once.
        func schedule(_ item: Pending) {
            var low = 0
            var high = pending.count
            while low < high {
                let middle = (low + high) / 2
                if (pending[middle].time, pending[middle].order) <= (item.time, item.order) {
                    low = middle + 1
                } else {
                    high = middle
                }
            }
            pending.insert(item, at: low)
        }

        func emit(upTo limit: UnixTime) async {
            let due = pending.prefix { $0.time <= limit }
            for item in due {
                now = max(now, item.time)
                let body = templates[item.shape]!.fill(item.values)
                let id = Self.deliveryID(item.order, at: item.time)
                group.append(
                    IncomingDelivery(
                        id: id, event: item.event, hookID: "424242", contentType: "application/json",
                        body: Data(body), receivedAt: item.time))
                if group.count >= options.groupSize { await commit() }
            }
            pending.removeFirst(due.count)
        }

        for index in 0..<options.runs {
            let t0 = start + Double(index) * spacing + Double(next() % 1_000) / 1_000 * spacing
            let duration = 60 + Double(next() % 540)
            let repository = Int(next() % UInt64(options.repositories))
            let workflow = Int(next() % UInt64(Self.workflows.count))
            let branch = Self.branches[Int(next() % UInt64(Self.branches.count))]
            let failed = next() % 10 == 0
            let runNumber = (runNumbers[repository * 8 + workflow] ?? 0) + 1
            runNumbers[repository * 8 + workflow] = runNumber
            let runID = 5_000_000_000 + options.firstRun + index
            let values: [String: String] = [
                "REPO": "scale-org/repo-\(Self.padded(repository))", "REPONAME": "repo-\(Self.padded(repository))",
                "REPOID": String(800_000_000 + repository), "RUN": String(runID), "RUNNUM": String(runNumber),
                "JOB": String(40_000_000_000 + options.firstRun + index), "JOBNAME": Self.jobs[workflow],
                "WF": Self.workflows[workflow], "BRANCH": branch, "CONCLUSION": failed ? "failure" : "success",
                "T0": Self.timestamp(t0), "T1": Self.timestamp(t0 + 15), "T2": Self.timestamp(t0 + duration),
            ]
            let order = (options.firstRun + index) * 3
            schedule(Pending(time: t0, order: order, event: "workflow_run", shape: "run.requested", values: values))
            schedule(
                Pending(
                    time: t0 + duration, order: order + 1, event: "workflow_job", shape: "job.completed", values: values
                ))
            schedule(
                Pending(
                    time: t0 + duration + 3, order: order + 2, event: "workflow_run", shape: "run.completed",
                    values: values))
            runsStarted = index + 1
            await emit(upTo: t0)
            if Date().timeIntervalSince(lastProgress) >= 10 {
                lastProgress = Date()
                let elapsed = lastProgress.timeIntervalSince(began)
                Self.progress(
                    "\(runsStarted) of \(options.runs) runs (\(Int(Double(runsStarted) / elapsed)) runs/s, "
                        + "simulated day \(Int((now - start) / 86_400) + 1), RSS \(Self.residentKB() / 1024) MB)")
            }
        }
        await emit(upTo: .infinity)
        await commit()
        // Time enough for every card to end (end delay, display time), then the last turn.
        now += 3_600
        for _ in 0..<3 {
            await commit()
            now += 600
        }
        if options.pruneEvery > 0 { await prune(service, at: now) }
        days.append(sizes(day: days.count + 1, runs: runsStarted))
        let seconds = Date().timeIntervalSince(began)
        // The daemon's checkpointer would have copied the WAL by now; leave the file whole.
        _ = try SQLiteConnection(path: options.database).checkpoint(.truncate)
        let final = sizes(day: days.count, runs: runsStarted)
        if let csv = options.sizesCSV {
            var text = "day,runs,database_bytes,wal_bytes\n"
            for day in days { text += "\(day.day),\(day.runs),\(day.databaseBytes),\(day.walBytes)\n" }
            try text.write(toFile: csv, atomically: true, encoding: .utf8)
        }
        return Summary(
            runs: options.runs, deliveries: delivered, seconds: seconds,
            runsPerSecond: Double(options.runs) / seconds, deliveriesPerSecond: Double(delivered) / seconds,
            statuses: statuses, requestsCompleted: completed, databaseBytes: final.databaseBytes,
            walBytes: final.walBytes, maxResidentKB: Self.residentKB(field: "VmHWM"), start: start, end: options.end,
            days: days)
    }

    /// Retention as the daemon's loop runs it: a batch per table per call, again while work is left.
    private func prune(_ service: BridgeService, at now: UnixTime) async {
        while await service.pruneRetention(at: now) {}
    }

    private func sizes(day: Int, runs: Int) -> Day {
        Day(
            day: day, runs: runs, databaseBytes: Self.fileSize(options.database),
            walBytes: Self.fileSize(options.database + "-wal"))
    }

    /// SplitMix64: the same runs for the same options, on any machine.
    private mutating func next() -> UInt64 {
        random &+= 0x9e37_79b9_7f4a_7c15
        var z = random
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// A version-1 UUID, as GitHub's `X-GitHub-Delivery` is: the clock is the delivery's time (100 ns
    /// ticks since 1582-10-15) and the node its order, so every id is unique and a year of them is
    /// spread over the whole `deliveries` key as GitHub's would be (the clock's low 32 bits come
    /// first and go round every 7 minutes). Ids that all shared one prefix filled a corner of the key,
    /// and new deliveries then landed in an index as small as an empty database's.
    static func deliveryID(_ order: Int, at time: UnixTime) -> String {
        let ticks = UInt64(time * 10_000_000) &+ 0x01B2_1DD2_1381_4000
        let node = UInt64(order) & 0xFFFF_FFFF_FFFF | 0x0100_0000_0000
        let clockSequence = 0x8000 | UInt64(order >> 48 & 0x3FFF)
        return [
            hex(ticks & 0xFFFF_FFFF, digits: 8), hex(ticks >> 32 & 0xFFFF, digits: 4),
            hex(ticks >> 48 & 0x0FFF | 0x1000, digits: 4), hex(clockSequence, digits: 4), hex(node, digits: 12),
        ].joined(separator: "-")
    }

    static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    static func padded(_ value: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, 3 - text.count)) + text
    }

    /// GitHub's timestamp form, `2026-12-01T08:30:00Z`.
    static func timestamp(_ time: UnixTime) -> String {
        var seconds = time_t(time.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    static func quoted(_ text: String) -> String {
        let data = try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
        return String(decoding: (data ?? Data("[\"\"]".utf8)).dropFirst().dropLast(), as: UTF8.self)
    }

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// A line of /proc/self/status in kB (VmRSS: now; VmHWM: the peak).
    static func residentKB(field: String = "VmRSS") -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    static func progress(_ line: String) {
        FileHandle.standardError.write(Data(("scale-fill: " + line + "\n").utf8))
    }
}
