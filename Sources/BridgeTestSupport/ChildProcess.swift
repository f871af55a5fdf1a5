import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Waiting for a child process without Foundation's `waitUntilExit`, which on Linux spins a run
/// loop and, with many children exiting at once (parallel tests), can miss the exit and spin
/// forever at full CPU.
public enum ChildProcess {
    /// Polls until `process` has exited or `timeout` passes; true when it exited.
    @discardableResult
    public static func wait(for process: Process, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !hasExited(process), Date() < deadline { usleep(20_000) }
        // Once the kernel says it is gone, wait for Foundation to record the exit too: reading
        // `terminationStatus` before that traps.
        let settle = Date().addingTimeInterval(30)
        while process.isRunning, hasExited(process), Date() < settle { usleep(10_000) }
        return hasExited(process)
    }

    /// True when Foundation saw the exit, or the kernel shows the process gone or a zombie
    /// (Foundation reaps children late when many exit at once).
    public static func hasExited(_ process: Process) -> Bool {
        guard process.isRunning else { return true }
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)
        else { return true }
        // The state follows the parenthesised command name: "pid (comm) S …".
        guard let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state == "Z" || state == "X"
    }

    /// SIGTERM, a bounded wait, then SIGKILL if it is still there; true when it exited in time.
    @discardableResult
    public static func terminate(_ process: Process, timeout: Double = 10) -> Bool {
        guard !hasExited(process) else { return true }
        // kill(2) rather than `terminate()`, which traps when Foundation's view of the child is
        // in flux (it exited and is not reaped yet).
        kill(process.processIdentifier, SIGTERM)
        if wait(for: process, timeout: timeout) { return true }
        kill(process.processIdentifier, SIGKILL)
        wait(for: process, timeout: 5)
        return false
    }

    /// The exit status when Foundation recorded one; nil while it still thinks the child runs.
    public static func status(of process: Process) -> Int32? {
        process.isRunning ? nil : process.terminationStatus
    }

    /// SIGKILL and a bounded wait.
    public static func kill9(_ process: Process) {
        kill(process.processIdentifier, SIGKILL)
        wait(for: process, timeout: 10)
    }
}
