import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeDaemon

/// `StartTimeoutExtender` against a datagram socket standing in for systemd's: an extension at
/// once, then one per interval carrying the latest status, none after `stop`.
@Suite("start timeout extender", .serialized)
struct StartTimeoutExtenderTests {
    @Test("extends at once, keeps extending with the latest status, and goes quiet after stop")
    func extendsUntilStopped() throws {
        let directory = NSTemporaryDirectory() + "extender-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = try SystemdIntegrationTests.NotifySocket(path: directory + "/notify.sock")
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.path])
        let extender = StartTimeoutExtender(notifier: notifier, interval: 0.05, grant: 2)

        extender.keepWaiting(status: "applying schema migration 1 of 2: first")
        let first = socket.messages(until: { !$0.isEmpty }, timeout: 10)
        #expect(first == ["EXTEND_TIMEOUT_USEC=2000000\nSTATUS=applying schema migration 1 of 2: first"])
        extender.keepWaiting(status: "applying schema migration 2 of 2: second")
        // The timer repeats the latest status: wait for two of its repeats.
        let repeats = socket.messages(
            until: { $0.filter { $0.hasSuffix("2 of 2: second") }.count >= 3 }, timeout: 10)
        #expect(repeats.filter { $0.hasSuffix("2 of 2: second") }.count >= 3, "\(repeats)")
        #expect(repeats.allSatisfy { $0.hasPrefix("EXTEND_TIMEOUT_USEC=2000000\nSTATUS=") })

        extender.stop()
        _ = socket.messages(until: { _ in false }, timeout: 0.1)  // one already in flight
        let after = socket.messages(until: { _ in false }, timeout: 0.3)
        #expect(after.isEmpty, "\(after)")
    }

    @Test("the heartbeat beats every interval with the status and the time so far, with or without systemd")
    func heartbeat() async throws {
        let beats = LineLog()
        let extender = StartTimeoutExtender(notifier: SystemdNotifier(environment: [:]), interval: 0.05) {
            status, seconds in beats.append("\(status) \(seconds > 0)")
        }
        extender.keepWaiting(status: "applying schema migration 11 of 12: key deliveries")
        for _ in 0..<200 where beats.all.count < 2 { try await Task.sleep(for: .milliseconds(10)) }
        extender.stop()
        #expect(beats.all.count >= 2)
        #expect(beats.all.allSatisfy { $0 == "applying schema migration 11 of 12: key deliveries true" })
    }
}
