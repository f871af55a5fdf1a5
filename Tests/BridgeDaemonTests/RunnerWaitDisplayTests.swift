import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

/// Where a person looks when a run does not start: `runs show` (text and `--json`, which
/// `/api/runs/{id}` serves) and the status page name the job that waits for a runner, since when
/// and its labels, escaped like every name they print.
@Suite("runner wait in runs show and on the status page", .timeLimit(.minutes(1)))
struct RunnerWaitDisplayTests {
    static let key = RunKey(repository: "acme/widgets", runID: 7_123, attempt: 1)
    static let since: UnixTime = 1_700_000_002

    /// A database holding one run whose job has waited twelve minutes for a runner.
    static func database(labels: [String] = ["self-hosted", "arm64"]) throws -> (ScratchDirectory, String) {
        let directory = try ScratchDirectory()
        let path = directory.path("bridge.sqlite")
        let database = try BridgeDatabase(path: path)
        var state = RunState(
            key: key, repository: Repository(fullName: key.repository, htmlURL: "https://github.com/acme/widgets"),
            at: since)
        let job = JobRecord(id: 70, name: "test (arm64)", status: .queued, createdAt: since, labels: labels)
        state.jobs[70] = job
        state.runnerWait = RunnerWait(jobID: 70, job: job.name, since: since, labels: labels, noticedAt: since + 720)
        var rows = EngineRows()
        rows.runs = [EngineRows.Run(state: state, slug: "gh-7123", released: false, jobs: [job])]
        try database.write { try $0.save(rows, at: since + 720) }
        return (directory, path)
    }

    @Test("runs show: a runner line with the job, since when and its labels; --json says it still waits")
    func runsShow() throws {
        let (directory, path) = try Self.database()
        let text = try BridgeProcess.runToCompletion(
            ["runs", "show", "7123", "--database", path, "--no-color"], in: directory)
        #expect(text.status == 0, "\(text.stderr)")
        let line = try #require(text.stdout.split(separator: "\n").first { $0.hasPrefix("runner: ") })
        #expect(line.hasPrefix("runner: test (arm64) waits for a runner since "))
        #expect(line.contains("(self-hosted, arm64); the card said so at "))
        let json = try BridgeProcess.runToCompletion(
            ["runs", "show", "7123", "--database", path, "--json"], in: directory)
        let wait = try #require(json.json?.arrayValue?.first?["runner_wait"])
        #expect(wait["job"] == "test (arm64)")
        #expect(wait["labels"] == ["self-hosted", "arm64"])
        #expect(wait["waiting"] == true)
        #expect(wait["since"] == .string(GitHubTimestamp.format(Self.since)))
    }

    @Test("status page: a Runner line, a hostile label escaped")
    func statusPage() throws {
        let (directory, path) = try Self.database(labels: ["<script>alert(1)</script>", "arm64"])
        let html = try withExtendedLifetime(directory) {
            StatusPage.render(try StatusSnapshot.read(from: try BridgeDatabase(path: path), at: Self.since + 800))
        }
        #expect(html.contains("<dt>Runner</dt><dd>test (arm64) waits for a runner since "))
        #expect(html.contains("(&lt;script&gt;alert(1)&lt;/script&gt;, arm64)"))
        #expect(!html.contains("<script>alert"))
    }
}
