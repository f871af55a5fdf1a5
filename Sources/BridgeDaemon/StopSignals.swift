import Dispatch
import Foundation

/// SIGTERM and SIGINT, caught from before the daemon starts until it stops.
///
/// Set up before `Daemon.start`, so a stop asked for while the daemon starts (systemd stopping a
/// unit the moment it said READY=1, an operator's Ctrl-C during a long migration) is kept and ends
/// the run as soon as it begins: caught only once the daemon was running, such a signal arrived
/// while it was ignored and was lost, and the process ran on until a second one. SIGHUP is
/// ignored from here too (its default would kill the process mid-start); `runUntilSignalled`
/// gives it its meaning, a reload, once there is a daemon to reload.
public final class StopSignals: @unchecked Sendable {
    private let stopRequested = DispatchSemaphore(value: 0)
    // Set once in init, cancelled by `cancel`; never touched concurrently.
    private var sources: [any DispatchSourceSignal] = []

    /// Returns once both sources are armed: `resume()` arms a source later, on libdispatch's own
    /// queue, and a signal in between (its default action already replaced) would be lost.
    public init() {
        signal(SIGHUP, SIG_IGN)
        let armed = DispatchSemaphore(value: 0)
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { [stopRequested] in stopRequested.signal() }
            source.setRegistrationHandler { armed.signal() }
            source.resume()
            sources.append(source)
        }
        for _ in sources { armed.wait() }
    }

    /// Returns once SIGTERM or SIGINT arrived (at once if one came already).
    func wait() {
        stopRequested.wait()
    }

    func cancel() {
        sources.forEach { $0.cancel() }
    }
}
