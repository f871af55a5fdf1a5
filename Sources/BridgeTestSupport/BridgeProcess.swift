import BridgeCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The built `pushward-bridge` executable, run as a subprocess. Output goes to files, not pipes, so
/// a chatty child can never block on a full pipe.
public final class BridgeProcess: @unchecked Sendable {
    public static var binary: URL { TestAssets.builtBinary }

    /// A fixed environment: nothing of the test runner's (a `PUSHWARD_*` there must not leak in),
    /// except its sanitizer options.
    public static let baseEnvironment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"].merging(sanitizerOptions) { $1 }

    /// The runner's `TSAN_OPTIONS`, `ASAN_OPTIONS`, …: under `make sanitize` the binary is sanitized
    /// too, and these send its reports to the files the target checks (`log_path`) and apply the
    /// same suppressions. Without them a child's report would go to a stderr file nobody reads.
    public static let sanitizerOptions: [String: String] = ProcessInfo.processInfo.environment.filter { name, _ in
        ["TSAN_OPTIONS", "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"].contains(name)
    }

    public struct Result: Sendable {
        public var status: Int32
        public var reason: SpawnedProcess.TerminationReason
        public var stdout: String
        public var stderr: String

        public var json: JSONValue? { try? JSONValue(parsing: Data(stdout.utf8)) }
    }

    public let process: SpawnedProcess
    public let stdoutPath: String
    public let stderrPath: String

    /// Starts the binary; throws (failing the test, never skipping it) when the binary is missing.
    public init(_ arguments: [String], environment: [String: String] = [:], in directory: ScratchDirectory) throws {
        let binary = Self.binary
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw TestFailure("no pushward-bridge executable at \(binary.path): build with `swift build --build-tests`")
        }
        let name = UUID().uuidString
        stdoutPath = directory.path("\(name).stdout")
        stderrPath = directory.path("\(name).stderr")
        process = try SpawnedProcess(
            executable: binary.path, arguments: arguments,
            environment: Self.baseEnvironment.merging(environment) { $1 },
            directory: directory.url.path, standardInput: .null, standardOutput: .file(stdoutPath),
            standardError: .file(stderrPath))
    }

    public var pid: pid_t { process.processIdentifier }

    public var stderrText: String {
        (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
    }

    /// Waits for the serve log line that names the bound port (`"http.port"`).
    public func waitForPort(timeout: Double = 10) throws -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            for line in stderrText.split(separator: "\n") {
                if let port = (try? JSONValue(parsing: Data(line.utf8)))?["http.port"]?.intValue { return port }
            }
            guard process.isRunning else { break }
            usleep(20_000)
        }
        throw TestFailure("serve never logged its port; stderr: \(stderrText)")
    }

    /// Waits for the process to exit; false when it is still running after `timeout` seconds.
    public func waitForExit(timeout: Double) -> Bool {
        ChildProcess.wait(for: process, timeout: timeout)
    }

    /// Kills the process if a test left it running.
    public func ensureStopped() {
        if process.isRunning {
            process.send(SIGKILL)
            _ = waitForExit(timeout: 5)
        }
    }

    public var result: Result {
        Result(
            status: ChildProcess.status(of: process) ?? -1,
            reason: process.terminationReason,
            stdout: (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "", stderr: stderrText)
    }

    /// Runs a command to completion (at most `timeout` seconds), blocking the calling thread; the
    /// one way every test target runs the binary to its end (`offPool` wraps it for async tests).
    public static func runToCompletion(
        _ arguments: [String], environment: [String: String] = [:], in directory: ScratchDirectory,
        timeout: Double = 20
    ) throws -> Result {
        let child = try BridgeProcess(arguments, environment: environment, in: directory)
        defer { child.ensureStopped() }
        guard child.waitForExit(timeout: timeout) else {
            throw TestFailure("pushward-bridge \(arguments) did not finish within \(timeout) s")
        }
        return child.result
    }
}
