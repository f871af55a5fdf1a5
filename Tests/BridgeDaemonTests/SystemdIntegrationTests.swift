import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The real binary under systemd's protocols: `Type=notify` messages, socket activation, SIGHUP.
@Suite("systemd integration", .serialized, .timeLimit(.minutes(2)))
struct SystemdIntegrationTests {
    static var binary: URL { TestAssets.builtBinary }

    static func scratch() throws -> String {
        let directory = NSTemporaryDirectory() + "systemd-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let config = """
            {"listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "\(directory)/bridge.sqlite",
             "github": {"webhook_secrets": ["systemd-secret-0123456"]}}
            """
        try config.write(toFile: directory + "/config.json", atomically: true, encoding: .utf8)
        return directory
    }

    /// A datagram socket bound at `path`, as systemd's notify socket is.
    final class NotifySocket {
        let descriptor: Int32
        let path: String

        init(path: String) throws {
            self.path = path
            descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard bound == 0 else { throw CocoaError(.fileWriteUnknown) }
            var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit {
            close(descriptor)
            unlink(path)
        }

        /// The messages that arrive until `received` holds of them, or until `seconds` pass: a guard
        /// against a message that never comes, not a window for it to come in. A sanitizer slows the
        /// binary's start and stop manyfold, so the test waits for the messages themselves.
        func messages(until done: ([String]) -> Bool, timeout seconds: Double = 60) -> [String] {
            var received: [String] = []
            let deadline = Date().addingTimeInterval(seconds)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !done(received), Date() < deadline {
                let count = recv(descriptor, &buffer, buffer.count, 0)
                if count > 0 { received.append(String(decoding: buffer[0..<count], as: UTF8.self)) }
            }
            return received
        }
    }

    /// `serve` on the scratch directory's configuration, with `notify` as systemd's notify socket
    /// and `environment` added to this process's.
    static func serve(_ directory: String, notify: NotifySocket, environment extra: [String: String] = [:]) throws
        -> SpawnedProcess
    {
        try SpawnedProcess(
            executable: binary.path, arguments: ["serve", "--config", directory + "/config.json"],
            environment: ProcessInfo.processInfo.environment.merging(["NOTIFY_SOCKET": notify.path]) { $1 }
                .merging(extra) { $1 },
            standardInput: .inherit, standardOutput: .inherit)
    }

    @Test("with NOTIFY_SOCKET the binary says READY=1, then STOPPING=1, and exits 0 on SIGTERM")
    func notifyProtocol() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let notify = try NotifySocket(path: directory + "/notify.sock")
        let process = try Self.serve(directory, notify: notify, environment: ["WATCHDOG_USEC": "1000000"])
        // Ready first, then (every half WATCHDOG_USEC) the keep-alive: wait for two of them, so the
        // watchdog is seen to repeat.
        let started = notify.messages(until: { $0.filter { $0 == "WATCHDOG=1" }.count >= 2 })
        // A new database's migrations ask for more start time first (see the next test).
        let afterMigrations = started.drop { $0.hasPrefix("EXTEND_TIMEOUT_USEC=") }
        #expect(afterMigrations.first?.hasPrefix("READY=1") == true, "\(started)")
        #expect(started.contains("WATCHDOG=1"), "a watchdog keep-alive every half WATCHDOG_USEC")
        process.send(SIGTERM)
        let stopping = notify.messages(until: { $0.contains("STOPPING=1") })
        #expect(ChildProcess.wait(for: process, timeout: 60), "exits after SIGTERM")
        #expect(stopping.contains("STOPPING=1"), "\(stopping)")
        #expect(ChildProcess.status(of: process) == 0)
        #expect(process.terminationReason == .exit)
    }

    @Test("a SIGTERM the moment READY=1 is sent stops it (the signal is caught before the start, not after)")
    func stopRightAfterReady() throws {
        for _ in 0..<5 {
            let directory = try Self.scratch()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let notify = try NotifySocket(path: directory + "/notify.sock")
            let process = try Self.serve(directory, notify: notify)
            let started = notify.messages(until: { $0.contains { $0.hasPrefix("READY=1") } })
            process.send(SIGTERM)
            let stopped = ChildProcess.wait(for: process, timeout: 20)
            #expect(stopped, "still running after SIGTERM; it said \(started)")
            if !stopped {
                process.send(SIGKILL)
                return
            }
            #expect(ChildProcess.status(of: process) == 0)
        }
    }

    @Test("upgrading a database, the binary asks systemd for more start time, naming the migration, before READY=1")
    func migrationExtendsTheStartTimeout() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let old = try SQLiteConnection(path: directory + "/bridge.sqlite")
            try MigrationRunner.migrate(old, Array(BridgeSchema.migrations.dropLast()))
            old.close()
        }
        let notify = try NotifySocket(path: directory + "/notify.sock")
        let process = try Self.serve(directory, notify: notify)
        let started = notify.messages(until: { $0.contains { $0.hasPrefix("READY=1") } })
        process.send(SIGTERM)
        #expect(ChildProcess.wait(for: process, timeout: 60), "exits after SIGTERM")
        let last = BridgeSchema.migrations.count
        #expect(
            started.first
                == "EXTEND_TIMEOUT_USEC=30000000\nSTATUS=applying schema migration \(last) of \(last): "
                + BridgeSchema.migrations[last - 1].name, "\(started)")
        #expect(started.last?.hasPrefix("READY=1") == true, "\(started)")
    }

    @Test("socket-activated, it serves the socket systemd passes (systemd-socket-activate)")
    func socketActivation() async throws {
        let activator = "/usr/bin/systemd-socket-activate"
        try #require(
            FileManager.default.isExecutableFile(atPath: activator), "systemd-socket-activate is part of systemd")
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A free port: bind 0, read it, release it for the activator.
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(probe, socketAddress, length)
                return getsockname(probe, socketAddress, &length)
            }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        close(probe)
        // The activator hands the binary only PATH, HOME, USER and TERM: pass the sanitizer options
        // (`make sanitize`) on, so a report of the binary lands where the target looks.
        let process = try SpawnedProcess(
            executable: activator,
            arguments: ["-l", "127.0.0.1:\(port)"]
                + BridgeProcess.sanitizerOptions.keys.sorted().map { "--setenv=\($0)" }
                + [Self.binary.path, "serve", "--config", directory + "/config.json"],
            standardInput: .inherit, standardOutput: .inherit, standardError: .file(directory + "/activator.log"))
        defer { ChildProcess.terminate(process) }
        var status = 0
        let deadline = Date().addingTimeInterval(10)
        while status != 200, Date() < deadline {
            let request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/healthz")!, timeoutInterval: 2)
            if let (_, response) = try? await URLSession.shared.data(for: request) {
                status = (response as? HTTPURLResponse)?.statusCode ?? 0
            } else {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        #expect(status == 200)
    }

    @Test("SIGHUP-style reload applies new filters and the log level, and names what needs a restart")
    func reload() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lines = LineLog()
        let configuration = try BridgeConfiguration(
            json: Data(contentsOf: URL(fileURLWithPath: directory + "/config.json")))
        let daemon = try Daemon.start(
            configuration: configuration, logger: Logger(label: "test", minimumLevel: .info, sink: { lines.append($0) })
        )
        var changed = configuration
        changed.filter.branches.exclude = [GlobPattern("main")]
        changed.logLevel = "debug"
        changed.listen = "127.0.0.1:1"
        // reload waits on the service; run it off Swift's cooperative pool, as the SIGHUP handler does.
        let new = changed
        try await offPool { daemon.reload(new) }
        await daemon.shutdown()
        let line = try #require(lines.all.first { $0.contains("reloaded the configuration") })
        let object = try JSONValue(parsing: Data(line.utf8))
        #expect(object["reloaded"] == ["filters", "log_level"])
        #expect(object["needs_restart"] == ["listen"])
        #expect(daemon.logger.minimumLevel == .debug)
        #expect(daemon.configuration.filter == changed.filter)
    }

}
