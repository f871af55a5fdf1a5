import Foundation

/// Which of several instances on one PostgreSQL database leads: applies deliveries and sends to
/// PushWard. The lead is a session advisory lock held on a connection of its own, so it ends with
/// that session:
///
/// - A leader that is killed, or whose host goes away, loses its session, and with it the lock, as
///   soon as the server sees the connection close.
/// - A leader that is frozen (SIGSTOP, a stalled VM, a half-open connection) sends nothing, so the
///   server ends its session after `idle_session_timeout`, which this connection sets to
///   `Settings.sessionTimeout`. `poll` on a leader is the heartbeat that keeps the session busy.
/// - Every takeover bumps `leadership.epoch`. Leader writes carry their epoch and change nothing
///   once another instance has taken over, and a heartbeat that finds a newer epoch steps down.
/// - A leader trusts its lead only for `Settings.trusted` after the last heartbeat it began, which
///   is less than the session timeout: a leader that resumes after a freeze knows it may have been
///   replaced, and starts nothing before its next heartbeat says whether it still leads.
///
/// Not thread-safe: one owner (the daemon's leadership loop) calls it.
public final class LeaderLease {
    /// How quickly a lost leader is noticed.
    public struct Settings: Sendable, Equatable {
        /// The server ends the lease session after this long without a statement; a frozen leader
        /// loses the lead after at most this long.
        public var sessionTimeout: Duration
        /// How often the owner should call `poll`: a leader's heartbeat, a follower's attempt to
        /// take over. A follower takes over at most this long after the lock is free.
        public var pollInterval: Duration

        public init(sessionTimeout: Duration = .seconds(3), pollInterval: Duration = .milliseconds(500)) {
            precondition(pollInterval * 2 < sessionTimeout, "a leader must heartbeat well inside its session timeout")
            self.sessionTimeout = sessionTimeout
            self.pollInterval = pollInterval
        }

        /// How long after a heartbeat began a leader may still start work: the session timeout less
        /// two poll intervals, so a lead is never trusted past the moment the server could have
        /// ended it.
        public var trusted: Duration { sessionTimeout - pollInterval * 2 }
    }

    /// Where a `poll` left this instance.
    public enum Role: Sendable, Equatable {
        case following
        /// Leading under `epoch`, which this instance's takeover wrote.
        case leading(epoch: Int64)
    }

    /// The advisory lock key of the lead: fixed, so every build and instance agrees on it, and
    /// unlikely to collide with another application's keys in a shared database ("pwbr" + "lea").
    public static let lockKey: Int64 = 0x7077_6272_006C_6561

    public let settings: Settings
    /// Who this instance is, as recorded in `leadership.holder` (host name and process id).
    public let holder: String
    public private(set) var role: Role = .following
    /// When the last heartbeat (or the takeover) that confirmed the lead began.
    private var confirmedAt: ContinuousClock.Instant?
    private let uri: String
    private var connection: PostgresConnection?

    public init(uri: String, holder: String, settings: Settings = Settings()) {
        self.uri = uri
        self.holder = holder
        self.settings = settings
    }

    /// One round: a follower tries to take the lead, a leader confirms it (the heartbeat).
    ///
    /// Returns the role after the round. On an error the lease session is closed (a leader's lock
    /// goes with it, so no one is left thinking it leads) and the role is `.following`; the next
    /// round connects again.
    @discardableResult
    public func poll(
        at now: ContinuousClock.Instant = .now, wallClock: Double = Date().timeIntervalSince1970
    ) throws(PostgresError) -> Role {
        do {
            let connection = try openConnection()
            switch role {
            case .following:
                if try takeOver(connection, wallClock: wallClock) { confirmedAt = now }
            case .leading(let epoch):
                let confirmed = try connection.run(
                    "UPDATE leadership SET heartbeat_at = $2 WHERE epoch = $1", [.integer(epoch), .real(wallClock)])
                if confirmed == 1 {
                    confirmedAt = now
                } else {
                    // Another instance took over although this session held the lock: the lock was
                    // lost with a session that ended unnoticed. Let go of everything.
                    drop()
                }
            }
            return role
        } catch {
            drop()
            throw error as? PostgresError ?? PostgresError(message: String(describing: error))
        }
    }

    /// Whether a leader may start work at `now`: it leads, and its last heartbeat began within
    /// `Settings.trusted`.
    public func isTrusted(at now: ContinuousClock.Instant = .now) -> Bool {
        guard case .leading = role, let confirmedAt else { return false }
        return now - confirmedAt < settings.trusted
    }

    /// Gives the lead up at once (a clean stop), so a follower takes over at its next poll rather
    /// than after the session timeout.
    public func stepDown() {
        if case .leading = role, let connection {
            _ = try? connection.query("SELECT pg_advisory_unlock($1::bigint)", [.integer(Self.lockKey)]) { _ in () }
        }
        role = .following
        confirmedAt = nil
    }

    /// Closes the lease session: the lock, if held, is released by the server.
    public func close() {
        drop()
    }

    /// The backend process of the lease session, for an operator (and a test) to see which
    /// session holds the lock; nil when not connected.
    public var backendPID: Int32? { connection?.backendPID }

    private func openConnection() throws(PostgresError) -> PostgresConnection {
        if let connection, connection.isOpen { return connection }
        let timeout =
            Int(settings.sessionTimeout.components.seconds * 1000)
            + Int(settings.sessionTimeout.components.attoseconds / 1_000_000_000_000_000)
        // `tcp_user_timeout` bounds how long a statement can hang on a dead network, so a
        // partitioned leader's heartbeat fails (and it steps down) instead of waiting for TCP.
        let opened = try PostgresConnection(
            uri: uri, applicationName: "pushward-bridge leader lease",
            parameters: [("tcp_user_timeout", String(timeout))])
        try opened.execute("SET idle_session_timeout = \(timeout)")
        connection = opened
        return opened
    }

    /// Takes the lock if it is free and bumps the epoch; true when this instance now leads.
    private func takeOver(_ connection: PostgresConnection, wallClock: Double) throws -> Bool {
        let taken = try connection.queryOne("SELECT pg_try_advisory_lock($1::bigint)", [.integer(Self.lockKey)]) {
            $0.bool(0) ?? false
        }
        guard taken == true else { return false }
        let epoch = try connection.queryOne(
            """
            INSERT INTO leadership (singleton, epoch, holder, since, heartbeat_at) VALUES (true, 1, $1, $2, $2)
            ON CONFLICT (singleton) DO UPDATE SET epoch = leadership.epoch + 1, holder = excluded.holder,
                since = excluded.since, heartbeat_at = excluded.heartbeat_at
            RETURNING epoch
            """,
            [.text(holder), .real(wallClock)]
        ) { $0.int64(0) }
        guard let epoch = epoch ?? nil else {
            throw PostgresError(message: "taking the lead wrote no leadership row")
        }
        role = .leading(epoch: epoch)
        return true
    }

    private func drop() {
        connection?.close()
        connection = nil
        role = .following
        confirmedAt = nil
    }
}
