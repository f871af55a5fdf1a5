import BridgeCore
import BridgeStore
import Foundation

/// PostgreSQL only: which instance leads, kept on a thread of its own because libpq blocks.
///
/// Every `LeaderLease.Settings.pollInterval` it polls the lease (a follower tries to take the lead,
/// a leader heartbeats) and tells the service when its role changed. Between two polls a leader
/// listens on a second connection for the `NOTIFY` a follower sends once a waiting delivery
/// committed, and has the service apply it at once; each poll also has it look, so a notification
/// lost with a dropped connection costs one poll interval, nothing more. A stop gives the lead up
/// (the followers take over at their next poll rather than after the session timeout).
final class LeadershipService: DaemonService, @unchecked Sendable {
    let name = "leadership"
    private let lease: LeaderLease
    private let uri: String
    private let service: BridgeService
    private let board: LeadershipBoard
    private let logger: Logger
    private let stopped = NSCondition()
    private var stopping = false
    private var finished = false

    init(
        uri: String, holder: String, settings: LeaderLease.Settings, service: BridgeService, board: LeadershipBoard,
        logger: Logger
    ) {
        lease = LeaderLease(uri: uri, holder: holder, settings: settings)
        self.uri = uri
        self.service = service
        self.board = board
        self.logger = logger
    }

    func start() throws {
        let thread = Thread { [self] in run() }
        thread.name = "pushward-bridge leadership"
        thread.start()
    }

    func shutdown(deadline: DispatchTime) {
        stopped.lock()
        stopping = true
        stopped.broadcast()
        let left = Int64(deadline.uptimeNanoseconds) - Int64(DispatchTime.now().uptimeNanoseconds)
        let until = Date(timeIntervalSinceNow: Double(max(left, 0)) / 1e9)
        while !finished, stopped.wait(until: until) {}
        if !finished { logger.warning("did not give the lead up before the shutdown deadline", [:]) }
        stopped.unlock()
    }

    private var isStopping: Bool {
        stopped.lock()
        defer { stopped.unlock() }
        return stopping
    }

    private func run() {
        var role = LeaderLease.Role.following
        var listener: PostgresConnection?
        var failing = false
        while !isStopping {
            let began = ContinuousClock.now
            let next: LeaderLease.Role
            do {
                next = try lease.poll(at: began)
                if failing {
                    logger.notice("the leader lease is reachable again", [:])
                    failing = false
                }
            } catch {
                next = .following
                if !failing {
                    logger.warning(
                        "cannot reach the leader lease; following until it answers",
                        ["error": .string(error.description)])
                    failing = true
                }
            }
            let trusted = lease.settings.trusted
            board.update { standing in
                if case .leading(let epoch) = next {
                    if standing.epoch != epoch { standing.since = Date().timeIntervalSince1970 }
                    standing.epoch = epoch
                    standing.trustedUntil = began + trusted
                } else {
                    standing = LeadershipBoard.Standing()
                }
            }
            if next != role {
                role = next
                service.roleChanged(to: next)
            }
            let wakeAt = began + lease.settings.pollInterval
            if case .leading = role {
                service.noteWaitingDeliveries()
                listener = listen(listener, until: wakeAt)
            } else {
                listener?.close()
                listener = nil
                sleep(until: wakeAt)
            }
        }
        listener?.close()
        lease.stepDown()
        lease.close()
        board.update { $0 = LeadershipBoard.Standing() }
        if case .leading = role { service.roleChanged(to: .following) }
        stopped.lock()
        finished = true
        stopped.broadcast()
        stopped.unlock()
    }

    /// Waits for followers' notifications until `deadline`, on `listener` (opened and listening if
    /// nil); returns the connection to keep, nil when it failed (the next round opens another).
    private func listen(_ listener: PostgresConnection?, until deadline: ContinuousClock.Instant) -> PostgresConnection?
    {
        do {
            let connection: PostgresConnection
            if let listener {
                connection = listener
            } else {
                connection = try PostgresConnection(uri: uri, applicationName: "pushward-bridge leader listener")
                try connection.listen(BridgeDatabase.waitingDeliveriesChannel)
            }
            while !isStopping {
                let left = deadline - .now
                guard left > .zero else { break }
                let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) * 1e-18
                if try !connection.waitForNotifications(timeout: seconds).isEmpty {
                    service.noteWaitingDeliveries()
                }
            }
            return connection
        } catch {
            listener?.close()
            sleep(until: deadline)
            return nil
        }
    }

    private func sleep(until deadline: ContinuousClock.Instant) {
        stopped.lock()
        defer { stopped.unlock() }
        while !stopping {
            let left = deadline - .now
            guard left > .zero else { return }
            let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) * 1e-18
            _ = stopped.wait(until: Date(timeIntervalSinceNow: seconds))
        }
    }
}
