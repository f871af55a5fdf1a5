import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// `runs show` and `explain` after retention: a run whose deliveries were pruned says so, and a
/// run pruned altogether is reported as pruned (with the key and its value), not as never recorded.
@Suite("CLI after retention", .timeLimit(.minutes(1)))
struct RetentionCLITests {
    private func run(_ arguments: [String], _ replayed: CLITests.Replayed) async throws -> BridgeProcess.Result {
        let result = try await BridgeProcess.run(arguments + ["--database", replayed.database], in: replayed.directory)
        #expect(result.reason == .exit, "\(arguments) crashed: \(result.stderr)")
        return result
    }

    @Test("runs show and explain say plainly that retention pruned a run's deliveries, then the run")
    func prunedRun() async throws {
        let replayed = try await CLITests.replay()
        let runID = String(CLITests.runID)
        let later = Date().timeIntervalSince1970 + 400 * 86_400

        // Before any pruning: no notice.
        let whole = try await run(["runs", "show", runID], replayed)
        #expect(whole.status == 0)
        #expect(!whole.stdout.contains("pruned"))

        do {
            let database = try BridgeDatabase(path: replayed.database)
            while try database.pruneDeliveries(receivedBefore: later, retention: 30 * 86_400, at: later) > 0 {}
        }
        let show = try await run(["runs", "show", runID], replayed)
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("Its deliveries were pruned by retention (retention.deliveries = 30d"))
        let json = try await run(["runs", "show", runID, "--json"], replayed)
        #expect(json.json?.arrayValue?.first?["retention"]?.stringValue?.contains("retention.deliveries") == true)
        let explained = try await run(["explain", runID, "--json"], replayed)
        #expect(explained.status == 0, "\(explained.stderr)")
        let sentences = (explained.json?.arrayValue ?? []).compactMap { $0.stringValue }
        #expect(
            sentences.dropFirst().first?.contains("Its deliveries were pruned by retention") == true, "\(sentences)")

        do {
            let database = try BridgeDatabase(path: replayed.database)
            #expect(try database.pruneRuns(updatedBefore: later, retention: 45 * 86_400, at: later) == 1)
        }
        for command in [["runs", "show", runID], ["explain", runID]] {
            let gone = try await run(command, replayed)
            #expect(gone.status == 1, "\(command)")
            #expect(gone.stderr.contains("run \(runID) is no longer recorded: its details were pruned by retention"))
            #expect(gone.stderr.contains("retention.runs = 45d"), "\(gone.stderr)")
            #expect(gone.stderr.contains("foo/webhook-testing"))
        }
        // An id above every pruned one was never recorded, and says so as before.
        let unknown = try await run(["runs", "show", String(CLITests.runID + 1)], replayed)
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no run \(CLITests.runID + 1) recorded"))
    }
}
