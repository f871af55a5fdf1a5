import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process started with `posix_spawn` and reaped with `waitpid`, in place of Foundation's
/// `Process` for every child the tests start.
///
/// Why not `Process`: before it spawns, swift-corelibs-foundation's `Process.run()` lists
/// `/proc/self/fd` to find the highest descriptor to close in the child, and copies each directory
/// entry's full 256-byte name, reading past the end of glibc's `readdir` buffer once the listing no
/// longer fits one buffer (about 1,300 descriptors, which the end-to-end suites reach running in
/// parallel). The suite died of SIGSEGV in that `memcpy` (fixed upstream in
/// swift-corelibs-foundation#5472, not in the toolchain). Foundation also reaps through a monitor of
/// its own that, with many children exiting at once, reports a child as running long after it
/// exited. Here the child's descriptors are closed by `posix_spawn` itself (`closefrom`, which
/// glibc does with `close_range(2)`, no directory listing), and the exit is read with `waitpid`
/// for this one pid, once, under a lock.
public final class SpawnedProcess: @unchecked Sendable {
    /// How the child ended, as Foundation's `Process.TerminationReason` says it.
    public enum TerminationReason: Sendable, Equatable {
        case exit
        case uncaughtSignal
    }

    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// The test process's own stream.
        case inherit
        /// `/dev/null`.
        case null
        /// A file: read for standard input; for output, written from its start (created when missing).
        case file(String)
        /// Appended to a file that exists (created when missing).
        case appending(String)
        /// A pipe whose other end is this object's `standardInput`/`standardOutput`/`standardError`.
        case pipe
    }

    public let processIdentifier: pid_t
    /// The writing end of the child's standard input, for `.pipe`.
    public let standardInput: FileHandle?
    /// The reading end of the child's standard output, for `.pipe`; EOF once the child and every
    /// process it passed the stream to have gone.
    public let standardOutput: FileHandle?
    /// The reading end of the child's standard error, for `.pipe`.
    public let standardError: FileHandle?

    private let lock = NSLock()
    /// The wait status once `waitpid` returned it; the pid is no one's to signal from then on.
    private var waitStatus: Int32?

    /// Starts `executable` (a path; no `PATH` search) with `arguments` (without `argv[0]`).
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment; nil passes this process's own.
    ///   - directory: the child's working directory; nil keeps this process's.
    public init(
        executable: String, arguments: [String] = [], environment: [String: String]? = nil,
        directory: String? = nil, standardInput: Stream = .null, standardOutput: Stream = .null,
        standardError: Stream = .null
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The parent's ends of the pipes, and the child's ends to close here once it has them.
        var parentEnds: [Int32?] = [nil, nil, nil]
        var childEnds: [Int32] = []
        var failure: TestFailure?
        for (target, stream) in [standardInput, standardOutput, standardError].enumerated() {
            let fd = Int32(target)
            switch stream {
            case .inherit:
                break
            case .null:
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                let flags = target == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC
                posix_spawn_file_actions_addopen(&actions, fd, path, flags, 0o600)
            case .appending(let path):
                posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard Self.pipe2(&ends, O_CLOEXEC) == 0 else {
                    failure = TestFailure("pipe2: \(String(cString: strerror(errno)))")
                    break
                }
                // stdin: the child reads ends[0]; stdout/stderr: the child writes ends[1]. dup2
                // in the child clears close-on-exec on the copy only.
                let (child, parent) = target == 0 ? (ends[0], ends[1]) : (ends[1], ends[0])
                posix_spawn_file_actions_adddup2(&actions, child, fd)
                parentEnds[target] = parent
                childEnds.append(child)
            }
        }
        if let directory { _ = Self.addChdir(&actions, directory) }
        // Nothing of this process beyond the three streams reaches the child: not a socket, not a
        // pipe's end another child should see EOF on.
        _ = Self.addClosefrom(&actions, 3)

        // Signals as a fresh process has them: none blocked (a test runner thread may block some),
        // every one at its default action (SIGPIPE is ignored in this process).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environmentLines =
            environment.map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } }
            ?? ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        var envp = environmentLines.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }

        var pid: pid_t = 0
        let spawned = failure == nil ? posix_spawn(&pid, executable, &actions, &attributes, &argv, &envp) : -1
        childEnds.forEach { close($0) }
        guard spawned == 0 else {
            parentEnds.compactMap { $0 }.forEach { close($0) }
            throw failure ?? TestFailure("cannot run \(executable): \(String(cString: strerror(spawned)))")
        }
        processIdentifier = pid
        let handles = parentEnds.map { $0.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) } }
        self.standardInput = handles[0]
        self.standardOutput = handles[1]
        self.standardError = handles[2]
    }

    // glibc's GNU extensions, which the Glibc module does not declare (spawn.h and unistd.h show
    // them under `_GNU_SOURCE` only); looked up once, by name, in the C library already loaded.
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private typealias AddChdir =
        @convention(c) (
            UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>
        ) -> Int32
    private typealias AddClosefrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    private static func glibc<Function>(_ name: String, as type: Function.Type) -> Function {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
            fatalError("the C library has no \(name) (glibc 2.34 or later is needed)")
        }
        return unsafeBitCast(symbol, to: type)
    }

    private static let pipe2 = glibc("pipe2", as: Pipe2.self)
    private static let addChdir = glibc("posix_spawn_file_actions_addchdir_np", as: AddChdir.self)
    private static let addClosefrom = glibc("posix_spawn_file_actions_addclosefrom_np", as: AddClosefrom.self)

    deinit {
        // A zombie would stay until the test process ends; a child still running is left alone.
        _ = reap()
    }

    /// Asks the kernel, without blocking, whether the child has ended; the status is kept.
    private func reap() -> Int32? {
        lock.withLock {
            if let waitStatus { return waitStatus }
            var status: Int32 = 0
            var waited: pid_t
            repeat { waited = waitpid(processIdentifier, &status, WNOHANG) } while waited < 0 && errno == EINTR
            if waited == processIdentifier { waitStatus = status }
            return waitStatus
        }
    }

    public var isRunning: Bool { reap() == nil }

    /// The exit code, or the signal that ended the child (as `Process` reports it); -1 while it runs.
    public var terminationStatus: Int32 {
        guard let status = reap() else { return -1 }
        // WIFEXITED, WEXITSTATUS and WTERMSIG are macros Swift does not import.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
    }

    /// `.uncaughtSignal` also while the child runs (it has not exited, so it has no exit code).
    public var terminationReason: TerminationReason {
        guard let status = reap() else { return .uncaughtSignal }
        return status & 0x7f == 0 ? .exit : .uncaughtSignal
    }

    /// Waits until the child has ended or `timeout` seconds passed; true when it ended.
    @discardableResult
    public func wait(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var pause: useconds_t = 1_000
        while isRunning {
            guard Date() < deadline else { return false }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
        return true
    }

    /// Sends `signal` while the child has not been reaped; after that the pid may be another
    /// process's, so nothing is sent. True when it was sent.
    @discardableResult
    public func send(_ signal: Int32) -> Bool {
        lock.withLock { waitStatus == nil && kill(processIdentifier, signal) == 0 }
    }
}
