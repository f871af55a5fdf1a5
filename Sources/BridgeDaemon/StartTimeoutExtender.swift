import Dispatch
import Foundation

/// Keeps systemd waiting while a long step of the start runs (a schema migration on a year of
/// rows): without it, a start past `TimeoutStartSec` (90 s by default) is killed, the migration's
/// transaction rolls back, and `Restart=on-failure` starts the same migration again, for ever.
///
/// From the first `keepWaiting` until `stop`, it sends `EXTEND_TIMEOUT_USEC` (each granting
/// `grant` seconds more) every `interval` seconds, with a `STATUS=` line saying what it waits for
/// (`systemctl status` shows it). The grant outlasts the interval, so a start that is working is
/// never cut off, and one that hangs is still stopped `grant` seconds after its last sign of
/// life. Each interval also calls `heartbeat` (with the status and the seconds since the first
/// `keepWaiting`), which the daemon uses to say in its log that a long migration is still going.
/// Without `NOTIFY_SOCKET` nothing is sent to systemd; the heartbeat still beats.
final class StartTimeoutExtender: @unchecked Sendable {
    typealias Heartbeat = @Sendable (_ status: String, _ seconds: Double) -> Void

    private let notifier: SystemdNotifier
    private let interval: Double
    private let grant: Double
    private let heartbeat: Heartbeat?
    private let lock = NSLock()
    private var status = ""
    private var started: ContinuousClock.Instant?
    private var timer: (any DispatchSourceTimer)?

    init(notifier: SystemdNotifier, interval: Double = 10, grant: Double = 30, heartbeat: Heartbeat? = nil) {
        self.notifier = notifier
        self.interval = interval
        self.grant = grant
        self.heartbeat = heartbeat
    }

    deinit {
        timer?.cancel()
    }

    /// Says `status` to systemd now with a first extension, and keeps extending until `stop`.
    func keepWaiting(status: String) {
        guard notifier.socketPath != nil || heartbeat != nil else { return }
        lock.withLock {
            self.status = status
            if started == nil { started = .now }
            if timer == nil {
                let timer = DispatchSource.makeTimerSource(queue: .global())
                timer.schedule(deadline: .now() + interval, repeating: interval)
                timer.setEventHandler { [weak self] in self?.beat() }
                timer.resume()
                self.timer = timer
            }
        }
        extend()
    }

    /// No more extensions: the start's own timeout applies again from the last one.
    func stop() {
        lock.withLock {
            timer?.cancel()
            timer = nil
        }
    }

    private func extend() {
        let status = lock.withLock { self.status }
        notifier.notify("EXTEND_TIMEOUT_USEC=\(Int(grant * 1_000_000))\nSTATUS=\(status)")
    }

    private func beat() {
        extend()
        let (status, started) = lock.withLock { (self.status, self.started) }
        guard let heartbeat, let started else { return }
        let elapsed = ContinuousClock.now - started
        heartbeat(status, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
    }
}
