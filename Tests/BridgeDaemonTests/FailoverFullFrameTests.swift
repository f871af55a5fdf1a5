import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The failover of issue 42, as a new user met it: two instances on PostgreSQL, the leader
/// frozen (SIGSTOP) while run 2 of the same repository begins on the other. The new leader's first
/// frame of run 2 is a full frame with an ETA from run 1's history; it once nulled `start_date`
/// and `end_date` beside its `duration`, PushWard let the null `end_date` win, and answered
/// `422 live_progress requires end_date or duration` to every try.
@Suite("Failover to a run with an ETA", .serialized, .timeLimit(.minutes(3)))
struct FailoverFullFrameTests {
    typealias Serve = CrashRecoveryTests.ServeProcess

    @Test("the leader frozen while run 2 starts: the new leader's first frame of run 2 is accepted with its window")
    func newLeadersFullFrameIsAccepted() async throws {
        let fake = try FakePushWardServer()
        let directory = try ScratchDirectory()
        let uri = try await PostgresServer.makeSharedDatabase()
        let config = try HighAvailabilityTests.writeConfig(directory: directory.url.path, fake: fake, uri: uri)
        let first = try Serve(configPath: config, log: directory.path("first.log"))
        let lead = try await HighAvailabilityTests.leader(uri)
        #expect(lead.pid == first.process.processIdentifier, "the first instance up leads")
        let second = try Serve(configPath: config, log: directory.path("second.log"))
        defer { _ = second.terminate() }

        // Run 1 ends on the leader: its 120 s build step is the history run 2's ETA comes from.
        let now = Date().timeIntervalSince1970
        let waves = [[RunScript.Job("build 🚀 \u{202E}", duration: 120)]]
        let one = RunScript(runID: 9_000, runNumber: 42, start: now - 600)
        for (index, event) in one.deliveries(waves: waves).enumerated() {
            let status = CrashRecoveryTests.post(event, id: "run1-\(index)", port: first.port)
            #expect(status == 202 || status == 200, "run 1 delivery \(index): \(String(describing: status))")
        }
        let runOneEnded = await DispatchEndToEndTests.eventually(timeout: 30) {
            fake.requests.contains {
                $0.method == "PATCH" && $0.body?["state"] == "ended" && (200..<300).contains($0.status)
            }
        }
        #expect(runOneEnded, "run 1's card ended")

        // The leader freezes; run 2 of the same repository begins on the other instance.
        kill(first.process.processIdentifier, SIGSTOP)
        defer {
            kill(first.process.processIdentifier, SIGCONT)
            _ = first.terminate()
        }
        let stoppedAt = Date().timeIntervalSince1970
        let two = RunScript(runID: 9_001, runNumber: 43, start: Date().timeIntervalSince1970, firstJobID: 60_000)
        let started = Array(two.deliveries(waves: waves, complete: false).prefix(4))
        for (index, event) in started.enumerated() {
            let status = CrashRecoveryTests.post(event, id: "run2-\(index)", port: second.port)
            #expect(status == 202 || status == 200, "run 2 delivery \(index): \(String(describing: status))")
        }
        let takeover = try await HighAvailabilityTests.leader(uri, after: lead.epoch)
        #expect(takeover.pid == second.process.processIdentifier)

        // The card shows run 2 running, with the window its duration set.
        let slug = try #require(fake.activities.keys.first)
        let shown = await DispatchEndToEndTests.eventually(timeout: 30) {
            guard let card = fake.activities[slug] else { return false }
            return card.content["url"]?.stringValue?.hasSuffix("/runs/9001") == true
                && card.content["end_date"] != nil && card.state == "ongoing"
        }
        let afterStop = fake.requests.filter { $0.at >= stoppedAt }
        let refused = afterStop.filter { !(200..<300).contains($0.status) }
        #expect(refused.isEmpty, "refused: \(refused.map { "\($0.status) \($0.body?.canonicalString ?? "")" })")
        #expect(fake.violations.isEmpty, "\(fake.violations)")
        #expect(shown, "run 2 with a window: \(String(describing: fake.activities[slug]))")
        let card = try #require(fake.activities[slug])
        #expect(card.content["live_progress"] == true)
        #expect(card.content["current_step"] == 1)
        if let start = card.content["start_date"]?.doubleValue, let end = card.content["end_date"]?.doubleValue {
            #expect(end - start > 60, "the window counts down the build's 120 s")
        }
        // No request carried duration beside a window date.
        for request in afterStop {
            guard let content = request.body?["content"]?.objectValue, content["duration"] != nil else { continue }
            #expect(content["start_date"] == nil && content["end_date"] == nil, "\(content)")
        }
        #expect(try await offPool { second.terminate() } == 0)
    }
}
