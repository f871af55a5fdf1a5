import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import HTTPClientSupport
import Testing

/// The status page as a browser draws it: a daemon with realistic runs (a finished one, one in
/// progress with history behind it, so weighted and counting down, a failed matrix and the
/// recorded attempt 10), loaded in headless Chromium, its rendered DOM checked, and a screenshot
/// taken. `UPDATE_SCREENSHOT=1` writes the screenshot to `docs/status-page.png` for the README.
///
/// Nothing is installed here: the test needs Debian's `chromium` (`make test` installs it).
@Suite("Status page in Chromium", .serialized, .timeLimit(.minutes(3)))
struct StatusPageBrowserTests {
    static let chromium = "/usr/bin/chromium"

    /// PushWard answering every request, so the history reads as it would in production, and
    /// `account` as the account's month.
    struct AcknowledgingTransport: PushWardTransport {
        var account: PushWardUsage = .unlimited

        var isDryRun: Bool { false }

        func send(_ request: PushWardRequest, gate: SendGate?) async -> PushWardAnswer {
            .success(status: request.method == .post ? 201 : 200)
        }

        func usage(gate: SendGate?) async -> PushWardUsageAnswer {
            .usage(account)
        }
    }

    static let widgets = Repository(fullName: "acme/widgets", htmlURL: "https://github.com/acme/widgets")
    static let apiServer = Repository(fullName: "acme/api-server", htmlURL: "https://github.com/acme/api-server")

    /// The last finished run of acme/widgets' CI on main: the history the active run is drawn from.
    static func finishedRun(now: UnixTime) -> [WebhookEvent] {
        var script = RunScript(runID: 9_101, runNumber: 141, workflow: "CI", start: now - 5_400, firstJobID: 10_000)
        script.repository = widgets
        return script.deliveries(waves: [
            [RunScript.Job("lint", duration: 24)],
            [RunScript.Job("build (linux)", duration: 62), RunScript.Job("build (macos)", duration: 95)],
            [
                RunScript.Job("test (unit)", duration: 104), RunScript.Job("test (integration)", duration: 210),
                RunScript.Job("test (e2e)", duration: 176),
            ],
            [RunScript.Job("docker (amd64)", duration: 70), RunScript.Job("docker (arm64)", duration: 88)],
            [RunScript.Job("deploy", duration: 45)],
        ])
    }

    /// The next run of the same workflow, in its test step: one shard of three done, 121 s into a
    /// step that took 210 s last time.
    static func activeRun(now: UnixTime) -> [WebhookEvent] {
        var script = RunScript(runID: 9_102, runNumber: 142, workflow: "CI", start: now - 250, firstJobID: 20_000)
        script.repository = widgets
        var events = [script.run("requested", at: 0), script.run("in_progress", at: 1)]
        events.append(script.job(20_000, "lint", "queued", createdAt: 2))
        events.append(script.job(20_000, "lint", "in_progress", createdAt: 2, startedAt: 4))
        events.append(
            script.job(20_000, "lint", "completed", createdAt: 2, startedAt: 4, completedAt: 26, conclusion: "success"))
        for (id, name, end) in [(20_001, "build (linux)", 91.0), (20_002, "build (macos)", 124.0)] {
            events.append(script.job(id, name, "queued", createdAt: 29))
            events.append(script.job(id, name, "in_progress", createdAt: 29, startedAt: 31))
            events.append(
                script.job(id, name, "completed", createdAt: 29, startedAt: 31, completedAt: end, conclusion: "success")
            )
        }
        let shards = [(20_003, "test (unit)"), (20_004, "test (integration)"), (20_005, "test (e2e)")]
        for (id, name) in shards { events.append(script.job(id, name, "queued", createdAt: 127)) }
        for (id, name) in shards { events.append(script.job(id, name, "in_progress", createdAt: 127, startedAt: 129)) }
        events.append(
            script.job(
                20_003, "test (unit)", "completed", createdAt: 127, startedAt: 129, completedAt: 229,
                conclusion: "success"))
        return events
    }

    /// A matrix of another repository where one Python version fails and the deploy is skipped.
    static func failedRun(now: UnixTime) -> [WebhookEvent] {
        var script = RunScript(
            runID: 9_201, runNumber: 88, workflow: "Tests", branch: "fix/retry-timeouts", start: now - 1_500,
            firstJobID: 30_000)
        script.repository = apiServer
        return script.deliveries(waves: [
            [RunScript.Job("lint", duration: 18)],
            [
                RunScript.Job("test (py3.10)", duration: 80), RunScript.Job("test (py3.11)", duration: 92),
                RunScript.Job("test (py3.12)", duration: 85, conclusion: "failure"),
                RunScript.Job("test (py3.13)", duration: 88),
            ],
            [RunScript.Job("deploy", duration: 0, conclusion: "skipped")],
        ])
    }

    /// Fills the daemon: every run but the active one finished and its card ended, the active one
    /// drawn with its live window.
    static func fill(_ admin: AdminAPITests.Admin) async throws {
        let now = Date().timeIntervalSince1970
        try await admin.deliver(finishedRun(now: now), prefix: "widgets-141")
        #expect(try await admin.waitUntilAllEnded(), "the finished run's card never ended")
        try await admin.deliver(failedRun(now: now), prefix: "api-88")
        try await AdminAPITests.replayRecorded(admin)
        #expect(try await admin.waitUntilAllEnded(), "the failed or the recorded run's card never ended")
        try await admin.deliver(activeRun(now: now), prefix: "widgets-142")
        let path = admin.databasePath
        let drawn = try await eventually {
            let database = try BridgeDatabase(path: path, readOnly: true)
            let run = try database.listRuns(repository: "acme/widgets").first { $0.key.runID == 9_102 }
            let content = try run.flatMap { try database.session(slug: $0.slug)?.acknowledged }
            return content?["live_progress"] == true && content?["state"] == "Test 1/3"
        }
        #expect(drawn, "the active run never showed its test step with a live window")
    }

    /// Runs Chromium headless, bounded by `timeout` (coreutils `timeout` kills its whole process
    /// group, renderers included); the output goes to files, so a chatty browser cannot block.
    static func chromium(_ arguments: [String], in directory: ScratchDirectory, timeout: Int = 60) async throws
        -> (status: Int32, stdout: String, stderr: String)
    {
        let profile = directory.path("profile-\(UUID().uuidString)")
        let stdoutPath = directory.path("chromium-\(UUID().uuidString).out")
        let stderrPath = directory.path("chromium-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let full =
            ["--kill-after=5", String(timeout), chromium, "--headless=new", "--no-sandbox", "--disable-gpu"]
            + ["--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-dev-shm-usage"]
            + ["--user-data-dir=\(profile)"] + arguments
        let status = try await offPool { () -> Int32 in
            let process = try SpawnedProcess(
                executable: "/usr/bin/timeout", arguments: full, standardInput: .inherit,
                standardOutput: .file(stdoutPath), standardError: .file(stderrPath))
            // A second bound, should `timeout` itself hang.
            if !process.wait(timeout: Double(timeout) + 15) {
                ChildProcess.kill9(process)
                return -1
            }
            return ChildProcess.status(of: process) ?? -1
        }
        let stdout = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        return (status, stdout, stderr)
    }

    /// The first of the month after `time`, UTC: when a monthly quota starts over.
    static func nextMonth(after time: UnixTime) -> UnixTime {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let date = Date(timeIntervalSince1970: time)
        let first = calendar.date(from: calendar.dateComponents([.year, .month], from: date))!
        return calendar.date(byAdding: .month, value: 1, to: first)!.timeIntervalSince1970
    }

    /// The text of each match of `pattern`'s first group.
    static func matches(_ pattern: String, in text: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: pattern, options: [.dotMatchesLineSeparators])
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
            String(text[Range($0.range(at: 1), in: text)!])
        }
    }

    @Test("Chromium renders a card per run with its counter, state and request history; screenshot")
    func renderedPage() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.chromium) else {
            Issue.record(
                """
                \(Self.chromium) is missing: install Debian's chromium package \
                (apt-get install chromium; `make test` installs it with the other DEB_PACKAGES)
                """)
            return
        }
        // A paid month part spent, so the header and the chart have a limit, a reset and a level.
        let now = Date().timeIntervalSince1970
        let account = PushWardUsage(
            liveActivityUpdatesUsed: 1_200, liveActivityUpdatesLimit: 100_000, quotaResetsAt: Self.nextMonth(after: now)
        )
        let admin = try await AdminAPITests.Admin.start(
            transport: AcknowledgingTransport(account: account), fidelity: "auto")
        do {
            try await Self.fill(admin)
            let snapshot = try await admin.read { try StatusSnapshot.read(from: $0, at: Date().timeIntervalSince1970) }
            #expect(snapshot.runs.count == 4)
            #expect(snapshot.active.map(\.key.runID) == [9_102])
            let url = "http://127.0.0.1:\(admin.daemon.adminPort)/"
            let directory = try ScratchDirectory()

            let dump = try await Self.chromium(["--dump-dom", url], in: directory)
            #expect(dump.status == 0, "chromium --dump-dom failed: \(dump.stderr)")
            let dom = dump.stdout
            #expect(dom.contains("<section id=\"active\">"), "not the status page: \(dom.prefix(500))")
            let cards = Self.matches("(<svg [^>]*data-card=\"shown\"[^>]*>)", in: dom)
            #expect(cards.count == snapshot.runs.count, "one card per run")
            #expect(Self.matches("class=\"state\"[^>]*>([^<]*)</text>", in: dom).count == snapshot.runs.count)
            for run in snapshot.runs {
                let layout = try #require(run.shown?.layout, "\(run.key) has no card")
                // The card's width may cut a long state (a failure names job, step and count):
                // its start is what every card shows.
                #expect(dom.contains(">\(Markup.escaped(String(layout.state.prefix(12))))"), "state of \(run.key)")
                #expect(dom.contains(">\(layout.counter)</text>"), "counter of \(run.key)")
                #expect(dom.contains("href=\"\(run.gitHubURL)\""), "GitHub link of \(run.key)")
            }
            let active = try #require(snapshot.active.first?.shown?.layout)
            #expect(active.counter == "3/5")
            #expect(active.style == .weightedMatrix)
            #expect(Self.matches("class=\"eta\"[^>]*>([0-9:]+)</text>", in: dom).count == 1, "the ETA counts down")
            #expect(dom.contains("class=\"live\""), "the live window is drawn")
            // The request tables: a row per request (up to 40 per run), header aside.
            let tables = Self.matches("<table class=\"requests\">(.*?)</table>", in: dom)
            #expect(tables.count == snapshot.runs.count)
            let rows = tables.map { $0.components(separatedBy: "<tr>").count - 2 }
            #expect(rows == snapshot.runs.map { min(40, $0.requests.count) })
            #expect(rows.allSatisfy { $0 > 0 })
            #expect(dom.contains(">acknowledged</span>"))
            // The budget: the header's standing, and the month chart with a bar per day that cost.
            #expect(dom.contains(" / 100,000 updates · resets "), "the header's budget")
            let period = BudgetChart.Period.of(resetsAt: account.quotaResetsAt, now: Date().timeIntervalSince1970)
            let days = try await admin.read { try $0.acknowledgedRequestsPerDay(since: period.start) }
            #expect(!days.isEmpty)
            #expect(Self.matches("<rect class=\"bar\"([^>]*)>", in: dom).count == days.count, "a bar per day")
            #expect(dom.contains("class=\"limit-line\""))
            #expect(dom.contains("class=\"forecast-line\""))
            #expect(dom.contains("class=\"level-change\" data-level=\"full\""))
            #expect(Self.matches("<dd class=\"updates\">([0-9]+)</dd>", in: dom).count == snapshot.runs.count)

            let screenshot: String
            if ProcessInfo.processInfo.environment["UPDATE_SCREENSHOT"] == "1" {
                let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                    .deletingLastPathComponent().appendingPathComponent("docs")
                try FileManager.default.createDirectory(at: docs, withIntermediateDirectories: true)
                screenshot = docs.appendingPathComponent("status-page.png").path
            } else {
                screenshot = directory.path("status-page.png")
            }
            try? FileManager.default.removeItem(atPath: screenshot)
            let shot = try await Self.chromium(
                ["--hide-scrollbars", "--window-size=1200,1600", "--screenshot=\(screenshot)", url], in: directory)
            #expect(shot.status == 0, "chromium --screenshot failed: \(shot.stderr)")
            let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "not a PNG")
            #expect(png.count > 50_000, "a \(png.count)-byte screenshot is too small to show the page")
        } catch {
            try? await admin.stop()
            throw error
        }
        try await admin.stop()
    }
}
