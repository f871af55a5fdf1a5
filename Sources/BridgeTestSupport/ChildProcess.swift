import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The stopping and waiting every test does with a child, in one place: a polite SIGTERM with a
/// bounded wait, SIGKILL when that is not enough, and the exit status once there is one.
public enum ChildProcess {
    /// Waits until `process` has exited or `timeout` passes; true when it exited.
    @discardableResult
    public static func wait(for process: SpawnedProcess, timeout: Double) -> Bool {
        process.wait(timeout: timeout)
    }

    /// True when the child has exited (and is reaped).
    public static func hasExited(_ process: SpawnedProcess) -> Bool {
        !process.isRunning
    }

    /// SIGTERM, a bounded wait, then SIGKILL if it is still there; true when it exited in time.
    @discardableResult
    public static func terminate(_ process: SpawnedProcess, timeout: Double = 10) -> Bool {
        guard process.isRunning else { return true }
        process.send(SIGTERM)
        if process.wait(timeout: timeout) { return true }
        process.send(SIGKILL)
        process.wait(timeout: 5)
        return false
    }

    /// The exit status once the child exited; nil while it runs.
    public static func status(of process: SpawnedProcess) -> Int32? {
        process.isRunning ? nil : process.terminationStatus
    }

    /// SIGKILL and a bounded wait.
    public static func kill9(_ process: SpawnedProcess) {
        process.send(SIGKILL)
        process.wait(timeout: 10)
    }
}
