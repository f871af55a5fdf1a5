import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeDaemon

/// The daemon's lifecycle: services start in order, stop in reverse, a failed start undoes what
/// had started, and building a daemon binds and spawns nothing.
@Suite("Service group")
struct ServiceGroupTests {
    /// Records what happens to it in a shared journal; fails its start when told to.
    final class Recording: DaemonService, @unchecked Sendable {
        let name: String
        let journal: Journal
        let fails: Bool

        init(_ name: String, _ journal: Journal, fails: Bool = false) {
            self.name = name
            self.journal = journal
            self.fails = fails
        }

        func start() throws {
            if fails { throw TestFailure("\(name) cannot start") }
            journal.append("start \(name)")
        }

        func shutdown(deadline: DispatchTime) { journal.append("stop \(name)") }
    }

    final class Journal: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [String] = []
        func append(_ entry: String) { lock.withLock { entries.append(entry) } }
        var all: [String] { lock.withLock { entries } }
    }

    static let quiet = Logger(label: "test", minimumLevel: .error, sink: { _ in })

    @Test("services start in order and stop in reverse, once")
    func order() throws {
        let journal = Journal()
        let group = ServiceGroup(
            ["store", "dispatcher", "listener"].map { Recording($0, journal) }, logger: Self.quiet)
        try group.start()
        group.shutdown(deadline: .now() + 1)
        group.shutdown(deadline: .now() + 1)
        #expect(
            journal.all == [
                "start store", "start dispatcher", "start listener", "stop listener", "stop dispatcher", "stop store",
            ])
    }

    @Test("a service that cannot start stops those started before it, in reverse, and the error comes out")
    func failedStart() {
        let journal = Journal()
        let group = ServiceGroup(
            [
                Recording("store", journal), Recording("dispatcher", journal),
                Recording("listener", journal, fails: true),
            ],
            logger: Self.quiet)
        #expect(throws: TestFailure.self) { try group.start() }
        #expect(journal.all == ["start store", "start dispatcher", "stop dispatcher", "stop store"])
    }

    @Test("a loop service's shutdown wakes the loop from its signal and waits for it to end")
    func loopShutdown() async throws {
        let signal = WakeupSignal()
        let journal = Journal()
        let loop = LoopService("loop", logger: Self.quiet, wake: { signal.signal() }) {
            while !Task.isCancelled { await signal.wait(atMost: 600) }
            journal.append("loop ended")
        }
        try loop.start()
        // Shutdown blocks its thread while the loop's task ends on the pool: not on the pool itself.
        try await offPool { loop.shutdown(deadline: .now() + 30) }
        #expect(journal.all == ["loop ended"])
    }

    @Test("building a daemon binds nothing; start binds, in the documented order; stop releases the port")
    func daemonLifecycle() async throws {
        let directory = try ScratchDirectory()
        let configuration = try BridgeConfiguration(
            json: Data(
                #"""
                {"listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "\#(directory.path("bridge.sqlite"))",
                 "github": {"webhook_secrets": ["lifecycle-secret-0123"]}}
                """#.utf8))
        let daemon = try Daemon(configuration: configuration, logger: Self.quiet)
        #expect(daemon.port == 0 && daemon.adminPort == 0)
        #expect(
            daemon.serviceNames == [
                "store", "dispatcher", "retention", "memory", "webhook listener", "admin listener", "systemd readiness",
            ])
        try daemon.start()
        let port = daemon.port
        #expect(port > 0 && daemon.adminPort > 0)
        #expect(try HTTPTestClient.request(port: port, method: "GET", target: "/healthz").status == 200)
        try await offPool { daemon.stop(deadline: 30) }
        #expect(throws: (any Error).self) { try HTTPTestClient.request(port: port, method: "GET", target: "/healthz") }
    }
}
