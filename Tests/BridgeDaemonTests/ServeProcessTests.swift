import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing
import WebhookServer

#if canImport(Glibc)
    import Glibc
#endif

/// `pushward-bridge serve` as a real process: killed mid-write it loses no acknowledged delivery,
/// and SIGTERM stops it cleanly.
@Suite("serve as a process", .serialized, .timeLimit(.minutes(1)))
struct ServeProcessTests {
    static let secret = "process-test-secret-0123456789"

    /// Writes a configuration for `serve` on an ephemeral port.
    static func writeConfiguration(in directory: ScratchDirectory) throws -> (config: String, database: String) {
        let database = directory.path("bridge.sqlite")
        var configuration = TestConfiguration(database: database)
        configuration.secrets = [secret]
        return (try directory.write("config.json", configuration.json), database)
    }

    /// What the sender threads share: the ids that got a 202, and when to pull the plug.
    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private var acknowledgedIDs: [String] = []
        private var failures = 0
        let killAfter: Int
        let reached = DispatchSemaphore(value: 0)

        init(killAfter: Int) {
            self.killAfter = killAfter
        }

        func acknowledged(_ id: String) {
            let count = lock.withLock {
                acknowledgedIDs.append(id)
                return acknowledgedIDs.count
            }
            if count == killAfter { reached.signal() }
        }

        func failed() {
            lock.withLock { failures += 1 }
        }

        var ids: [String] { lock.withLock { acknowledgedIDs } }
        var failureCount: Int { lock.withLock { failures } }
    }

    /// The body of sender `sender`'s `index`th delivery: its own run, a new job each time, moving
    /// through queued, in_progress and completed.
    static func body(sender: Int, index: Int) -> Data {
        let script = RunScript(runID: 10_000 + sender, firstJobID: 100_000 * (sender + 1))
        let job = 100_000 * (sender + 1) + index / 3
        let event: WebhookEvent =
            switch index % 3 {
            case 0: script.job(job, "build \(index / 3)", "queued", createdAt: 1)
            case 1: script.job(job, "build \(index / 3)", "in_progress", createdAt: 1, startedAt: 2)
            default:
                script.job(
                    job, "build \(index / 3)", "completed", createdAt: 1, startedAt: 2, completedAt: 9,
                    conclusion: "success")
            }
        return GitHubPayload.body(event)
    }

    /// One round: start serve, deliver from several threads, SIGKILL after `killAfter` 202s, then
    /// return the acknowledged ids and what the database holds for each.
    static func killRound(_ round: Int, killAfter: Int) throws -> (acknowledged: [String], missing: [String]) {
        let directory = try ScratchDirectory()
        let (config, database) = try writeConfiguration(in: directory)
        let serve = try BridgeProcess(["serve", "--config", config], in: directory)
        defer { serve.ensureStopped() }
        let port = try serve.waitForPort()

        let tally = Tally(killAfter: killAfter)
        let senders = DispatchGroup()
        for sender in 0..<4 {
            senders.enter()
            let thread = Thread {
                defer { senders.leave() }
                for index in 0..<10_000 {
                    let id = "round\(round)-sender\(sender)-\(index)"
                    let payload = Self.body(sender: sender, index: index)
                    let headers = signedHeaders(event: "workflow_job", id: id, body: payload, secret: secret)
                    do {
                        let response = try HTTPTestClient.request(
                            port: port, method: "POST", target: "/webhook", headers: headers, body: payload)
                        if response.status == 202 { tally.acknowledged(id) }
                    } catch {
                        // The process is gone: this request was in flight, or came after.
                        tally.failed()
                        return
                    }
                }
            }
            thread.start()
        }
        guard tally.reached.wait(timeout: .now() + 30) == .success else {
            throw TestFailure(
                "only \(tally.ids.count) deliveries were acknowledged in 30 s; stderr: \(serve.stderrText)")
        }
        kill(serve.pid, SIGKILL)
        guard serve.waitForExit(timeout: 10) else { throw TestFailure("serve survived SIGKILL") }
        guard senders.wait(timeout: .now() + 30) == .success else { throw TestFailure("a sender hung") }
        guard serve.process.terminationReason == .uncaughtSignal else {
            throw TestFailure("serve exited by itself before the kill: \(serve.stderrText)")
        }

        let acknowledged = tally.ids
        let store = try BridgeDatabase(path: database, readOnly: true)
        var missing: [String] = []
        for id in acknowledged {
            if try store.delivery(id: id)?.outcome != .applied { missing.append(id) }
        }
        return (acknowledged, missing)
    }

    @Test("SIGKILL mid-write loses no delivery that was answered 202", arguments: 0..<3)
    func killedMidWrite(round: Int) async throws {
        var generator = SystemRandomNumberGenerator()
        let killAfter = Int.random(in: 5...60, using: &generator)
        let (acknowledged, missing) = try await offPool { try Self.killRound(round, killAfter: killAfter) }
        #expect(acknowledged.count >= killAfter, "killed after \(killAfter) acknowledged deliveries")
        #expect(missing.isEmpty, "killed after \(killAfter): acknowledged but not stored: \(missing)")
    }

    @Test("SIGTERM stops serve with exit status 0 within a few seconds")
    func cleanShutdown() async throws {
        let directory = try ScratchDirectory()
        let (config, database) = try Self.writeConfiguration(in: directory)
        let serve = try await offPool { try BridgeProcess(["serve", "--config", config], in: directory) }
        defer { serve.ensureStopped() }
        let port = try await offPool { try serve.waitForPort() }

        let body = Self.body(sender: 0, index: 0)
        let headers = signedHeaders(event: "workflow_job", id: "before-term", body: body, secret: Self.secret)
        let response = try await offPool {
            try HTTPTestClient.request(port: port, method: "POST", target: "/webhook", headers: headers, body: body)
        }
        #expect(response.status == 202)

        kill(serve.pid, SIGTERM)
        let exited = try await offPool { serve.waitForExit(timeout: 5) }
        #expect(exited, "serve still running 5 s after SIGTERM")
        let result = serve.result
        #expect(result.reason == .exit)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.contains(#""msg":"stopped""#))
        let stored = try await offPool {
            try BridgeDatabase(path: database, readOnly: true).delivery(id: "before-term")
        }
        #expect(stored?.outcome == .applied)
    }

    @Test("serve refuses to start without a webhook secret: exit 78 naming github.webhook_secrets")
    func serveWithoutSecret() async throws {
        let directory = try ScratchDirectory()
        var configuration = TestConfiguration(database: directory.path("bridge.sqlite"))
        configuration.secrets = []
        let config = try directory.write("config.json", configuration.json)
        let result = try await BridgeProcess.run(["serve", "--config", config], in: directory)
        #expect(result.reason == .exit)
        #expect(result.status == 78)
        #expect(result.stderr.contains("github.webhook_secrets"))
        #expect(!FileManager.default.fileExists(atPath: directory.path("bridge.sqlite")))
    }

    @Test(
        "serve refuses a database URI it cannot serve (78) or reach (1), creates no file by that name, shows no password",
        arguments: ["mysql://bridge:pw-\u{1F511}@db/bridge", "postgresql://bridge:pw-\u{1F511}@127.0.0.1:9/bridge"])
    func serveRefusesOtherDatabases(uri: String) async throws {
        let directory = try ScratchDirectory()
        var configuration = TestConfiguration(database: directory.path("bridge.sqlite"))
        configuration.secrets = [Self.secret]
        let config = try directory.write("config.json", configuration.json)
        let result = try await BridgeProcess.run(
            ["serve", "--config", config], environment: ["PUSHWARD_DATABASE": uri], in: directory)
        #expect(result.reason == .exit)
        if uri.hasPrefix("mysql:") {
            #expect(result.status == 78)
            #expect(result.stderr.contains("PUSHWARD_DATABASE") || result.stderr.contains("database:"))
        } else {
            #expect(result.status == 1)
            #expect(result.stderr.contains("cannot connect to postgresql://bridge:***@127.0.0.1:9/bridge"))
        }
        #expect(!result.stderr.contains("pw-"))
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
            .filter { !$0.hasSuffix(".stdout") && !$0.hasSuffix(".stderr") }  // the child's captured output
        #expect(left.sorted() == ["config.json"])
    }
}
