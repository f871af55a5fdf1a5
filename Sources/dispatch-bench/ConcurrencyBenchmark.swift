import BridgeCore
import BridgeDaemon
import BridgeTestSupport
import Foundation

/// N runs live at once for one person, through the daemon to the fake PushWard with its
/// documented limits (five ongoing per person with eviction, fifty activities, 200 requests a
/// minute): what PushWard's limits cost in the user's terms. For each N: the updates spent (what
/// the month's budget pays), the preemptions PushWard made, how long the run that fails waits from its failed job to a card on the phone
/// that shows the failure, the busiest minute of requests, and the most cards ongoing at once.
///
/// Every run is its own repository, most on the default branch, every third on a feature
/// branch; one run has a job waiting for approval, and one run, on a feature branch and started
/// first (so that beyond five runs it holds no slot until it fails), fails its first job three
/// seconds in. PushWard's evictions are counted, not refused: the bridge sends priorities so that
/// the card PushWard evicts when a higher-ranked one starts is the one the bridge gave up.
enum ConcurrencyBenchmark {
    static let sizes = [3, 6, 12, 40]
    static let repetitions = 3

    struct Figures {
        var runs: Int
        var updates: [Int] = []
        var evictions: [Int] = []
        /// The most times PushWard preempted one card (one run per repository): at most one.
        var mostPerCard: [Int] = []
        /// Seconds from the failed job's delivery to the failing card ongoing on the fake, showing it.
        var failingWait: [Double] = []
        var peakPerMinute: [Int] = []
        var peakOngoing: [Int] = []
        var refused: [Int] = []
        var cardsEnded: [Bool] = []
    }

    static func script(_ index: Int, of count: Int) -> RunScript {
        var script = RunScript(
            runID: 80_000 + index, runNumber: index, branch: index % 3 == 1 ? "feature-\(index)" : "main",
            start: Date().timeIntervalSince1970, firstJobID: 3_000_000 + 100 * index)
        script.repository = Repository(
            fullName: "acme/service-\(index)", htmlURL: "https://github.com/acme/service-\(index)",
            defaultBranch: "main")
        return script
    }

    static func slug(_ script: RunScript) -> String {
        ActivityIdentity.forRun(repository: script.repository, workflow: script.workflow, scope: .repository).slug
    }

    static func run() async -> Int32 {
        var all: [Figures] = []
        for size in sizes {
            var figures = Figures(runs: size)
            for _ in 0..<repetitions {
                do {
                    try await measure(size, into: &figures)
                } catch {
                    FileHandle.standardError.write(Data("dispatch-bench: runs at once: \(error)\n".utf8))
                    return 1
                }
            }
            all.append(figures)
        }
        report(all)
        let holds = all.allSatisfy { figures in
            figures.refused.allSatisfy { $0 == 0 } && figures.mostPerCard.allSatisfy { $0 <= 1 }
                && figures.peakPerMinute.allSatisfy { $0 < 200 } && figures.peakOngoing.allSatisfy { $0 <= 5 }
                && figures.cardsEnded.allSatisfy { $0 }
        }
        return holds ? 0 : 1
    }

    static func measure(_ size: Int, into figures: inout Figures) async throws {
        let fake = try FakePushWardServer()
        let directory = try DispatchBenchmark.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let daemon = try DispatchBenchmark.startDaemon(fake: fake, directory: directory)
        let scripts = (1...size).map { script($0, of: size) }
        let failing = scripts[0]
        let waiting = scripts[size / 2]
        var sequence = 0
        func post(_ event: WebhookEvent) async throws {
            sequence += 1
            let (name, body) = PayloadEncoder.encode(event)
            let delivery = RecordedDelivery(event: name, deliveryID: nil, body: body)
            try await DispatchBenchmark.post(delivery, id: "bench-\(sequence)-\(UUID().uuidString)", port: daemon.port)
        }
        // All start: the run, its first job queued and running (the waiting run's deploy waits).
        for (index, script) in scripts.enumerated() {
            let job = script.firstJobID
            try await post(script.run("requested", at: 0))
            try await post(script.run("in_progress", at: 1))
            try await post(script.job(job, "build", "queued", createdAt: 2))
            try await post(script.job(job, "build", "in_progress", createdAt: 2, startedAt: 3))
            if script.runID == waiting.runID {
                try await post(
                    script.job(job + 1, "deploy", "waiting", createdAt: 2, environment: "production"))
            }
            if index == 0 { try await Task.sleep(for: .milliseconds(200)) }
        }
        try await Task.sleep(for: .seconds(3))
        try await post(
            failing.job(
                failing.firstJobID, "build", "completed", createdAt: 2, startedAt: 3, completedAt: 6,
                conclusion: "failure"))
        let failedAt = Date().timeIntervalSince1970
        let failingSlug = slug(failing)
        var shownAt: Double?
        let waitDeadline = Date().addingTimeInterval(30)
        while shownAt == nil, Date() < waitDeadline {
            if let card = fake.activities[failingSlug], card.state == "ongoing",
                DesiredActivity.showsFailure(card.content)
            {
                shownAt = Date().timeIntervalSince1970
            } else {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        try await Task.sleep(for: .seconds(2))
        // All finish.
        for script in scripts {
            let job = script.firstJobID
            if script.runID != failing.runID {
                try await post(
                    script.job(
                        job, "build", "completed", createdAt: 2, startedAt: 3, completedAt: 9, conclusion: "success"))
            }
            if script.runID == waiting.runID {
                try await post(
                    script.job(
                        job + 1, "deploy", "completed", createdAt: 2, startedAt: 10, completedAt: 12,
                        conclusion: "success", environment: "production"))
            }
            try await post(
                script.run(
                    "completed", at: 12, conclusion: script.runID == failing.runID ? "failure" : "success"))
        }
        let endDeadline = Date().addingTimeInterval(90)
        var ended = false
        while !ended, Date() < endDeadline {
            let activities = fake.activities
            ended =
                scripts.allSatisfy { script in
                    activities[slug(script)].map { $0.state == "ended" } ?? true
                } && !activities.contains { SummaryCard.isSummary($0.key) && $0.value.state == "ongoing" }
            if !ended { try await Task.sleep(for: .milliseconds(50)) }
        }
        await daemon.shutdown()
        let requests = fake.requests
        figures.updates.append(fake.quota.used)
        figures.evictions.append(fake.evictions.count)
        figures.mostPerCard.append(Dictionary(grouping: fake.evictions, by: \.slug).values.map(\.count).max() ?? 0)
        figures.failingWait.append(shownAt.map { max(0, $0 - failedAt) } ?? .infinity)
        figures.peakPerMinute.append(peakMinute(requests.map(\.at)))
        figures.peakOngoing.append(fake.peakOngoing.values.max() ?? 0)
        figures.refused.append(requests.filter { $0.status >= 400 }.count)
        figures.cardsEnded.append(ended)
    }

    /// The most requests in any 60 s window.
    static func peakMinute(_ times: [Double]) -> Int {
        let sorted = times.sorted()
        var best = 0
        var low = 0
        for high in sorted.indices {
            while sorted[high] - sorted[low] >= 60 { low += 1 }
            best = max(best, high - low + 1)
        }
        return best
    }

    static func report(_ all: [Figures]) {
        func median(_ values: [Double]) -> Double { DispatchBenchmark.percentile(values, 0.5) }
        func median(_ values: [Int]) -> Int { Int(DispatchBenchmark.percentile(values.map(Double.init), 0.5)) }
        print(
            "\nRuns live at once for one person, against the fake PushWard with its documented limits "
                + "(medians of \(repetitions))")
        print(
            "| runs | updates spent | per run | preemptions | most of one card | failing run: failed job → card shows it "
                + "| busiest minute (requests) | most ongoing at once | refused | all ended |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        var rows: [JSONValue] = []
        for figures in all {
            let updates = median(figures.updates)
            let wait = median(figures.failingWait)
            print(
                "| \(figures.runs) | \(updates) | \(String(format: "%.1f", Double(updates) / Double(figures.runs))) "
                    + "| \(median(figures.evictions)) | \(figures.mostPerCard.max() ?? 0) | \(wait.isFinite ? String(format: "%.2f s", wait) : "never") "
                    + "| \(median(figures.peakPerMinute)) | \(median(figures.peakOngoing)) "
                    + "| \(median(figures.refused)) | \(figures.cardsEnded.allSatisfy { $0 } ? "yes" : "NO") |")
            rows.append([
                "runs": .number(Double(figures.runs)), "updates": .array(figures.updates.map { .number(Double($0)) }),
                "evictions": .array(figures.evictions.map { .number(Double($0)) }),
                "most_preemptions_of_one_card": .array(figures.mostPerCard.map { .number(Double($0)) }),
                "failing_wait_s": .array(figures.failingWait.map { $0.isFinite ? .number($0) : .null }),
                "peak_requests_per_minute": .array(figures.peakPerMinute.map { .number(Double($0)) }),
                "peak_ongoing": .array(figures.peakOngoing.map { .number(Double($0)) }),
                "refused": .array(figures.refused.map { .number(Double($0)) }),
            ])
        }
        try? FileManager.default.createDirectory(atPath: ".build/bench", withIntermediateDirectories: true)
        try? JSONValue.array(rows).canonicalString.write(
            toFile: ".build/bench/concurrency.json", atomically: true, encoding: .utf8)
    }
}
