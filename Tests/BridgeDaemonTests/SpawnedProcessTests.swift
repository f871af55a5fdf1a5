import BridgeTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The one way the tests start a child: what it must do where Foundation's `Process` crashed or
/// leaked, and the exit, signal and output a test reads back.
@Suite("Spawned process", .serialized, .timeLimit(.minutes(2)))
struct SpawnedProcessTests {
    /// Runs `script` with `/bin/sh -c`, stdout captured; the output once the child has exited.
    static func shell(_ script: String, environment: [String: String]? = ["PATH": "/usr/bin:/bin"])
        throws -> (process: SpawnedProcess, output: String)
    {
        let process = try SpawnedProcess(
            executable: "/bin/sh", arguments: ["-c", script], environment: environment, standardOutput: .pipe)
        let output = try #require(process.standardOutput).readDataToEndOfFile()
        #expect(process.wait(timeout: 30), "\(script) did not exit")
        return (process, String(decoding: output, as: UTF8.self))
    }

    /// The descriptors open in this process now.
    static func openDescriptors() -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [])
    }

    /// 2,000 more descriptors than the test process had: past the ~1,300 at which Foundation's
    /// `/proc/self/fd` listing over-reads glibc's buffer. The child sees none of them.
    @Test("starts a child with 2,000 extra descriptors open, and passes it only its three streams")
    func manyOpenDescriptors() throws {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        let needed = rlim_t(Self.openDescriptors().count + 2_100)
        if limit.rlim_cur < needed {
            try #require(limit.rlim_max >= needed, "RLIMIT_NOFILE's hard limit \(limit.rlim_max) is below \(needed)")
            limit.rlim_cur = needed
            try #require(setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0)
        }
        // Not close-on-exec, so only the spawn's own closing keeps them out of the child.
        var extra: [Int32] = []
        defer { extra.forEach { close($0) } }
        for _ in 0..<1_000 {
            var ends: [Int32] = [-1, -1]
            try #require(pipe(&ends) == 0, "pipe: \(String(cString: strerror(errno)))")
            extra += ends
        }
        #expect(Self.openDescriptors().count >= 2_000)
        let (process, output) = try Self.shell("ls /proc/$$/fd")
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        #expect(output.split(separator: "\n").sorted() == ["0", "1", "2"], "the child had \(output)")
    }

    @Test("reports the exit code, and the signal that ended a child")
    func exitAndSignal() throws {
        let (exited, _) = try Self.shell("exit 7")
        #expect(exited.terminationReason == .exit)
        #expect(exited.terminationStatus == 7)
        let (signalled, _) = try Self.shell("kill -TERM $$")
        #expect(signalled.terminationReason == .uncaughtSignal)
        #expect(signalled.terminationStatus == SIGTERM)

        let sleeper = try SpawnedProcess(executable: "/bin/sleep", arguments: ["60"])
        #expect(sleeper.isRunning)
        #expect(!sleeper.wait(timeout: 0.05))
        #expect(ChildProcess.status(of: sleeper) == nil)
        #expect(sleeper.send(SIGKILL))
        #expect(sleeper.wait(timeout: 10))
        #expect(sleeper.terminationReason == .uncaughtSignal && sleeper.terminationStatus == SIGKILL)
        // Reaped: its pid may be another process's now, so nothing more is sent to it.
        #expect(!sleeper.send(SIGKILL))
    }

    @Test("a child's standard output and error are captured, its input given, in its directory and environment")
    func streams() throws {
        let odd = "a b\u{202E}\u{0007}😀" + String(repeating: "x", count: 10_000)
        let env = try SpawnedProcess(
            executable: "/usr/bin/env", environment: ["PATH": "/usr/bin:/bin", "ODD": odd], standardOutput: .pipe)
        let listed = String(decoding: try #require(env.standardOutput).readDataToEndOfFile(), as: UTF8.self)
        #expect(env.wait(timeout: 30))
        #expect(listed.split(separator: "\n").map(String.init).sorted() == ["ODD=" + odd, "PATH=/usr/bin:/bin"])

        let directory = try ScratchDirectory()
        let errors = directory.path("errors.txt")
        let process = try SpawnedProcess(
            executable: "/bin/sh", arguments: ["-c", "pwd -P; tr a-z A-Z; echo oops >&2; exit 3"],
            environment: ["PATH": "/usr/bin:/bin"], directory: directory.url.path, standardInput: .pipe,
            standardOutput: .pipe, standardError: .file(errors))
        let input = try #require(process.standardInput)
        input.write(Data("shout\n".utf8))
        try input.close()
        let output = String(decoding: try #require(process.standardOutput).readDataToEndOfFile(), as: UTF8.self)
        #expect(process.wait(timeout: 30))
        #expect(output == directory.url.resolvingSymlinksInPath().path + "\nSHOUT\n")
        #expect((try? String(contentsOfFile: errors, encoding: .utf8)) == "oops\n")
        #expect(process.terminationStatus == 3)
    }

    /// What each descriptor of this process points at (`pipe:[1234]` for a pipe).
    static func descriptorTargets() -> [String] {
        Self.openDescriptors().compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)
        }
    }

    /// The pipe behind `handle`, as `/proc/self/fd` names it.
    static func pipeName(_ handle: FileHandle?) throws -> String {
        let fd = try #require(handle).fileDescriptor
        return try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")
    }

    /// The child's ends of its pipes are closed here at once (else EOF would never come while this
    /// process lives), and the parent's ends go with the object: a finished child leaves nothing
    /// open. Counted by pipe, not by descriptor total, so other suites running meanwhile do not count.
    @Test("leaves no pipe end open in the test process: the child's at once, its own once the object goes")
    func noDescriptorLeak() throws {
        var pipes: [String] = []
        for _ in 0..<20 {
            let process = try SpawnedProcess(
                executable: "/bin/sh", arguments: ["-c", "cat; echo done >&2"], standardInput: .pipe,
                standardOutput: .pipe, standardError: .pipe)
            let names = try [process.standardInput, process.standardOutput, process.standardError].map(Self.pipeName)
            pipes += names
            let targets = Self.descriptorTargets()
            for name in names {
                #expect(targets.filter { $0 == name }.count == 1, "\(name): only this process's end is open here")
            }
            try process.standardInput?.close()
            _ = process.standardOutput?.readDataToEndOfFile()
            let errors = process.standardError?.readDataToEndOfFile() ?? Data()
            #expect(String(decoding: errors, as: UTF8.self) == "done\n")
            #expect(process.wait(timeout: 30))
        }
        let left = Set(Self.descriptorTargets()).intersection(pipes)
        #expect(left.isEmpty, "still open: \(left)")
    }

    @Test("a program that is not there is an error, not a child")
    func missingExecutable() {
        #expect(throws: TestFailure.self) {
            _ = try SpawnedProcess(executable: "/nonexistent/program-\(UUID().uuidString)")
        }
    }
}
