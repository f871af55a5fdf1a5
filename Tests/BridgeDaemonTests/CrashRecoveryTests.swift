import BridgeCore
import BridgeTestSupport
import Foundation
import Testing
import WebhookServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The real binary, killed with SIGKILL at random points of a replay and started again on the
/// same database: PushWard must end up exactly where an uninterrupted run leaves it.
@Suite("Crash recovery", .serialized, .timeLimit(.minutes(3)))
struct CrashRecoveryTests {
    static let secret = "crash-secret-0123456"

    /// `pushward-bridge serve` as a child process; its webhook port is read from its first log line.
    final class ServeProcess: Sendable {
        let process: SpawnedProcess
        let port: Int
        /// The admin listener's port (metrics, the admin API).
        let adminPort: Int

        /// - Parameter log: a file that gets the child's log lines (stderr), for a failing test to show.
        init(configPath: String, log: String? = nil) throws {
            let binary = TestAssets.builtBinary
            guard FileManager.default.isExecutableFile(atPath: binary.path) else {
                throw Failure("the pushward-bridge binary is missing at \(binary.path): build it with the tests")
            }
            process = try SpawnedProcess(
                executable: binary.path, arguments: ["serve", "--config", configPath], standardError: .pipe)
            let handle = process.standardError!
            var buffer = Data()
            let deadline = Date().addingTimeInterval(10)
            var found: Int?
            var admin = 0
            while found == nil, Date() < deadline {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer += chunk
                for line in String(decoding: buffer, as: UTF8.self).split(separator: "\n") {
                    if let object = try? JSONValue(parsing: Data(line.utf8)), let port = object["http.port"]?.intValue {
                        found = port
                        admin = object["admin.port"]?.intValue ?? 0
                    }
                }
            }
            guard let found else {
                throw Failure("serve did not report its port: \(String(decoding: buffer, as: UTF8.self))")
            }
            port = found
            adminPort = admin
            // Keep draining stderr so the child never blocks on a full pipe.
            let sink = log.flatMap { path -> FileHandle? in
                _ = FileManager.default.createFile(atPath: path, contents: buffer)
                return FileHandle(forWritingAtPath: path).map {
                    $0.seekToEndOfFile(); return $0
                }
            }
            DispatchQueue.global().async {
                while case let chunk = handle.availableData, !chunk.isEmpty { sink?.write(chunk) }
                try? sink?.close()
            }
        }

        func kill() {
            ChildProcess.kill9(process)
        }

        /// SIGTERM; the exit status, or -1 when it did not exit within 10 s.
        func terminate() -> Int32 {
            ChildProcess.terminate(process) ? (ChildProcess.status(of: process) ?? -1) : -1
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Posts one delivery; nil when the connection failed (the process died under it).
    static func post(_ event: WebhookEvent, id: String, port: Int) -> Int? {
        let request = SignedDelivery.request(event, port: port, secret: secret, id: id, timeout: 5)
        let semaphore = DispatchSemaphore(value: 0)
        let status = LockedStatus()
        URLSession.shared.dataTask(with: request) { _, response, _ in
            status.value = (response as? HTTPURLResponse)?.statusCode
            semaphore.signal()
        }.resume()
        semaphore.wait()
        return status.value
    }

    final class LockedStatus: @unchecked Sendable {
        var value: Int?
    }

    static func writeConfig(directory: String, fake: FakePushWardServer) throws -> String {
        let path = directory + "/config.json"
        let json = """
            {"listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "\(directory)/bridge.sqlite",
             "github": {"webhook_secrets": ["\(secret)"]},
             "pushward": {"url": "\(fake.baseURL)", "api_key": "\(fake.apiKey)", "end_delay": "1s",
                          "end_display_time": "1s", "min_update_interval": "0s",
                          "fidelity": "full", "coalesce": "0s", "max_updates_per_hour": 3600}}
            """
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func events() -> [WebhookEvent] {
        RunScript(start: Date().timeIntervalSince1970 - 600).deliveries(waves: [
            [RunScript.Job("lint", duration: 20)],
            [RunScript.Job("test (a)", duration: 60), RunScript.Job("test (b)", duration: 90)],
            [RunScript.Job("deploy", duration: 30)],
        ])
    }

    /// Delivers `events` in order, killing the bridge after each delivery index in `killAfter`
    /// and starting it again; a delivery that got no answer is redelivered (as GitHub's
    /// redelivery would). Returns the fake's card once ended.
    static func replay(_ events: [WebhookEvent], killAfter: Set<Int>) async throws -> (
        FakePushWardServer, StoredActivity?
    ) {
        let fake = try FakePushWardServer()
        let directory = NSTemporaryDirectory() + "crash-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = try writeConfig(directory: directory, fake: fake)
        var bridge = try ServeProcess(configPath: config)
        let ids = events.indices.map { "delivery-\($0)" }
        var index = 0
        while index < events.count {
            guard let status = post(events[index], id: ids[index], port: bridge.port) else {
                bridge.kill()
                bridge = try ServeProcess(configPath: config)
                continue
            }
            #expect(status == 202 || status == 200, "delivery \(index): \(status)")
            if killAfter.contains(index) {
                bridge.kill()
                bridge = try ServeProcess(configPath: config)
            }
            index += 1
        }
        let slug = fake.activities.keys.first ?? ""
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, fake.activities[slug]?.state != "ended" {
            try await Task.sleep(for: .milliseconds(50))
        }
        // Waiting for the child to exit blocks: off the cooperative pool the in-process fake needs.
        let last = bridge
        #expect(try await offPool { last.terminate() } == 0, "SIGTERM ends the bridge cleanly")
        return (fake, fake.activities[slug])
    }

    @Test("killed at random points, the final card equals an uninterrupted run's; no end frame lost or doubled")
    func killAtRandomPoints() async throws {
        let events = Self.events()
        let (reference, expected) = try await Self.replay(events, killAfter: [])
        let expectedCard = try #require(expected)
        #expect(expectedCard.state == "ended")
        #expect(reference.violations.isEmpty)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3 {
            let kills = Set((0..<2).map { _ in Int.random(in: 0..<events.count, using: &generator) })
            let (fake, card) = try await Self.replay(events, killAfter: kills)
            #expect(card == expectedCard, "killed after deliveries \(kills.sorted())")
            #expect(fake.violations.isEmpty)
            let ends = fake.requests.filter { $0.method == "PATCH" && $0.body?["state"] == "ended" }
            #expect(ends.count == 1, "end frames: \(ends.count), killed after \(kills.sorted())")
            let finals = fake.requests.filter { $0.body?["content"]?["state"] == "Succeeded" }
            #expect(finals.count == 1, "final frames: \(finals.count), killed after \(kills.sorted())")
        }
    }
}
