import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A throwaway PostgreSQL server for tests, from Debian's `postgresql` package: `initdb` into a
/// temporary directory, listening on 127.0.0.1 and a free port, `fsync=off` (a test database need
/// not survive a power cut). When the tests run as root, as CI does, the server runs as the
/// `postgres` user through `runuser`, because PostgreSQL refuses to run as root.
///
/// One server per test process (`shared`), started on first use and stopped when the process
/// exits; each test takes its own database from `makeDatabase()`, so tests run in parallel without
/// seeing each other's rows.
public final class PostgresServer: @unchecked Sendable {
    /// Why the server could not start, in words a person can act on.
    public struct StartFailure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The server every test of this process shares. Throws (every time) if it could not start.
    public static func shared() throws -> PostgresServer {
        try sharedServer.get()
    }

    /// A new, empty database on the shared server (`shared()`, then `makeDatabase()`), made on a
    /// thread of its own, for async tests. Both block: the first call starts the server (`initdb`,
    /// `pg_ctl -w`: seconds, manyfold under a sanitizer) while every other caller waits in the same
    /// one-time initialisation, and each database is a `psql` run waited for. Called on one of
    /// Swift's cooperative threads (two on a 2-core machine), two such tests would hold the whole
    /// pool, and every daemon and fake in the process that answers through it, until Postgres is up.
    public static func makeSharedDatabase() async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try shared().makeDatabase() }) }.start()
        }
    }

    private static let sharedServer = Result { () throws -> PostgresServer in
        let server = try PostgresServer()
        runningDataDirectory = server.dataDirectory
        runningBinaries = server.binaries
        atexit { PostgresServer.stopRunning() }
        return server
    }

    /// 127.0.0.1 port the server listens on.
    public let port: Int
    /// Superuser the URIs connect as (trust authentication on loopback only).
    public let user = "postgres"

    private let root: String
    private let dataDirectory: String
    private let binaries: String
    private let lock = NSLock()
    private var databases = 0

    private init() throws {
        binaries = try Self.findBinaries()
        root = try Self.makeRoot()
        dataDirectory = root + "/data"
        port = try Self.freePort()
        try Self.run(
            binaries + "/initdb",
            ["-D", dataDirectory, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"])
        let options = [
            "-c listen_addresses=127.0.0.1", "-p \(port)", "-k \(root)", "-c fsync=off",
            "-c synchronous_commit=off", "-c full_page_writes=off", "-c max_connections=200",
        ].joined(separator: " ")
        try Self.run(
            binaries + "/pg_ctl",
            ["-D", dataDirectory, "-o", options, "-l", root + "/server.log", "-w", "-t", "60", "start"])
    }

    /// A new, empty database's URI, e.g. `postgresql://postgres@127.0.0.1:54321/test_3`.
    public func makeDatabase() throws -> String {
        let name = lock.withLock {
            databases += 1
            return "test_\(getpid())_\(databases)"
        }
        try Self.run(
            "/usr/bin/env",
            ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", uri(database: "postgres"), "-c", "CREATE DATABASE \(name)"],
            asServerUser: false)
        return uri(database: name)
    }

    /// The URI of `database` on this server.
    public func uri(database: String) -> String {
        "postgresql://\(user)@127.0.0.1:\(port)/\(database)"
    }

    // MARK: - Process exit

    nonisolated(unsafe) private static var runningDataDirectory: String?
    nonisolated(unsafe) private static var runningBinaries: String?

    /// `pg_ctl stop -m immediate` and the directory removed: the server must not outlive the tests.
    private static func stopRunning() {
        guard let dataDirectory = runningDataDirectory, let binaries = runningBinaries else { return }
        try? run(binaries + "/pg_ctl", ["-D", dataDirectory, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: (dataDirectory as NSString).deletingLastPathComponent)
    }

    // MARK: - Set-up

    /// The newest `/usr/lib/postgresql/<version>/bin` that has `initdb` and `pg_ctl`.
    private static func findBinaries() throws -> String {
        let base = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
        let candidates = versions.compactMap(Int.init).sorted(by: >).map { "\(base)/\($0)/bin" }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") })
        else {
            throw StartFailure(
                description:
                    "no PostgreSQL server in \(base)/*/bin: install Debian's postgresql package (make test-deps)")
        }
        return found
    }

    /// A private temporary directory the server's user owns.
    private static func makeRoot() throws -> String {
        var template = Array((NSTemporaryDirectory() + "/pushward-postgres-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw StartFailure(description: "cannot create a temporary directory: \(String(cString: strerror(errno)))")
        }
        let path = String(cString: made)
        if getuid() == 0 {
            guard let account = getpwnam("postgres") else {
                throw StartFailure(description: "running as root but there is no postgres user to run the server as")
            }
            guard chown(path, account.pointee.pw_uid, account.pointee.pw_gid) == 0 else {
                throw StartFailure(description: "cannot give \(path) to postgres: \(String(cString: strerror(errno)))")
            }
        }
        return path
    }

    /// A port nothing listens on now (bound to port 0, read back, released).
    public static func freePort() throws -> Int {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else {
            throw StartFailure(description: "socket(): \(String(cString: strerror(errno)))")
        }
        defer { close(socketDescriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(socketDescriptor, socketAddress, length) == 0
                    && getsockname(socketDescriptor, socketAddress, &length) == 0
            }
        }
        guard bound else {
            throw StartFailure(description: "cannot find a free port: \(String(cString: strerror(errno)))")
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs a server program (as `postgres` when this process is root) and waits for it.
    ///
    /// `posix_spawn` and `waitpid` rather than `Process`: Foundation reaps a child through its own
    /// monitor and, under a test runner's load, sometimes reports `runuser` as still running long
    /// after it exited. The output goes to a file, so a server that inherits it cannot hold a pipe.
    private static func run(_ executable: String, _ arguments: [String], asServerUser: Bool = true) throws {
        let command =
            asServerUser && getuid() == 0
            ? ["/usr/sbin/runuser", "-u", "postgres", "--", executable] + arguments : [executable] + arguments
        let outputPath = NSTemporaryDirectory() + "/pushward-postgres-output-\(getpid())-\(UUID().uuidString)"
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var arguments = command.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command[0], &actions, nil, &arguments, environ)
        guard spawned == 0 else {
            throw StartFailure(description: "cannot run \(command[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(120)
        var waited = waitpid(pid, &status, WNOHANG)
        while waited == 0, Date() < deadline {
            usleep(10_000)
            waited = waitpid(pid, &status, WNOHANG)
        }
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard waited == pid else {
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
            throw StartFailure(description: "\(command.joined(separator: " ")) did not finish within 120 s: \(output)")
        }
        // WIFEXITED and WEXITSTATUS are macros Swift does not import: exited normally with 0.
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            throw StartFailure(
                description: "\(command.joined(separator: " ")) failed (wait status \(status)): \(output)")
        }
    }
}
