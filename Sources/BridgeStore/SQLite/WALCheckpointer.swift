import CSQLite
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Checkpoints a WAL-mode database from a thread of its own, so the writer's commits never pay for it.
///
/// By default SQLite checkpoints inside the commit that takes the WAL past 1000 pages: the committing thread
/// copies the WAL into the database file and syncs it, and that commit is slow. With the writer's automatic
/// checkpoints off (`SQLiteConnection.disableAutomaticCheckpoints()`, or `BridgeDatabase.startCheckpointer`),
/// this checkpointer does the work instead, on its own read-write connection to the same file and its own
/// thread (not Swift's cooperative pool: checkpoints block on file I/O and fsync):
///
/// - Every `interval`, or at once when `poke()`d, a **passive** checkpoint. It takes no lock the writer needs and
///   waits for no one: it copies the frames no reader still needs, and the writer goes on committing meanwhile.
/// - A writer that commits continuously never finds the WAL fully copied at the start of a transaction, which is
///   when SQLite would start the WAL over, so passive checkpoints alone let it grow without end. Once it holds
///   more than `walSizeLimit` bytes and a passive checkpoint copied all of it (so no reader pins an old
///   snapshot), the WAL must be made to start over, in one of two ways:
///   - With the writer's connection attached (`attachWriter`, which `BridgeDatabase.startCheckpointer` does),
///     a **handover**: the checkpointer asks, and before its next transaction's `BEGIN` the writer runs a
///     passive checkpoint itself. It copies only what was committed since the checkpointer's last one (a
///     transaction or two), and since no commit can come between it and that `BEGIN`, the transaction finds
///     the WAL fully copied and SQLite starts the WAL over in it. Nobody takes the write lock: the writer
///     pauses for that short copy and its syncs once per `walSizeLimit` bytes, between two transactions.
///     A writer that has not begun a transaction within `handoverTimeout` (an idle one: its next
///     transaction starts the WAL over by itself) gets a restart checkpoint instead.
///   - Otherwise a **restart** checkpoint takes the write lock to copy the last frames and make the next commit
///     start the WAL over. It may wait `restartBusyTimeout` in all for the lock and for readers; if that is not
///     enough SQLite falls back to a passive checkpoint, and the next round comes sooner than the interval
///     (after `restartBusyTimeout`, then twice that, and so on). While it holds the lock the writer waits: for
///     the copy of what was committed while the round ran, two fsyncs and at most `restartBusyTimeout` of
///     reader waiting. Measured at 1,000 deliveries a second on an empty database, that made restarts the
///     largest part of the slowest answers (6 to 19 ms each, about every second). A handover pauses the
///     writer 2 to 14 ms there, and up to 32 ms on a 15 GB file: most of it the database file's `fdatasync`,
///     which SQLite must do before the WAL is written over.
/// - `stop()` ends the loop, then runs one **truncate** checkpoint (waiting up to `finalBusyTimeout`), so a
///   daemon that stops cleanly leaves an empty WAL.
///
/// Failures never stop the loop: each is passed to `onError` (the same failure again only after a success in
/// between) and counted, and the next round tries again. `SQLITE_BUSY` is no failure: a passive checkpoint gets
/// it when another connection is checkpointing, a restart one when it could not get the write lock or outwait
/// the readers; both are counted in `Snapshot.busy`.
///
/// The checkpointer's connection lives and dies on its thread; the methods here only touch the lock-protected
/// `Shared` state, so any thread or actor may call them.
public final class WALCheckpointer: Sendable {
    /// How often and how hard to checkpoint.
    public struct Configuration: Sendable, Equatable {
        /// How long the thread sleeps between passive checkpoints, unless poked.
        public var interval: Duration
        /// The WAL size, in bytes, above which a restart checkpoint starts the WAL over. `BridgeDatabase` also
        /// makes twice it the writer's `journal_size_limit`, so the file on disk shrinks back to that.
        ///
        /// 256 MB by default: each start-over pauses the writer for a sync of the database file, which on a
        /// year of history (a 14 GB file) is the slowest answer of its second. At 1,000 deliveries a second
        /// (18 WAL pages each) 64 MB meant such a pause about every second, often enough to be the ack p99
        /// (filled 20.4 ms against 3.2 ms on an empty file, median of 5); 256 MB spaces them four times as
        /// far (filled 4.7 and 5.4 ms against 4.2 and 3.4 ms, two series of 5). The cost is disk, up to 512 MB
        /// of WAL, and a crash recovery that reads the WAL again at start: after a `SIGKILL` with 254 MB of
        /// WAL, 163 ms to `/readyz` with the page cache warm and 843 to 1,114 ms with it dropped (a reboot).
        /// 512 MB measured a ratio of 1.16 but 1.05 to 1.36 s for that cold start, past the 1 s start target.
        public var walSizeLimit: Int
        /// How long a restart checkpoint may wait, in all, for the write lock and for readers. Part of it may be
        /// spent holding the write lock, so the writer can wait this long too.
        public var restartBusyTimeout: Duration
        /// How long the truncate checkpoint `stop()` runs may wait for the write lock and readers.
        public var finalBusyTimeout: Duration
        /// How long a handover waits for the attached writer's next transaction before a restart checkpoint
        /// does the work instead.
        public var handoverTimeout: Duration

        public init(
            interval: Duration = .milliseconds(250),
            walSizeLimit: Int = 256 << 20,
            restartBusyTimeout: Duration = .milliseconds(10),
            finalBusyTimeout: Duration = .seconds(2),
            handoverTimeout: Duration = .milliseconds(250)
        ) {
            self.interval = interval
            self.walSizeLimit = walSizeLimit
            self.restartBusyTimeout = restartBusyTimeout
            self.finalBusyTimeout = finalBusyTimeout
            self.handoverTimeout = handoverTimeout
        }
    }

    /// Counters for metrics. Every count starts at zero when the checkpointer starts.
    public struct Snapshot: Sendable, Equatable {
        /// Checkpoints that ran (completed, or did what a passive one could).
        public var checkpoints = 0
        /// Frames copied into the database file, worked out from the WAL positions SQLite reports after each
        /// checkpoint and the WAL header's salts, which tell a WAL started over since the last one.
        public var framesCheckpointed = 0
        /// Frames in the WAL after the last checkpoint.
        public var walFrames = 0
        /// Frames of those already copied into the database file.
        public var walFramesCheckpointed = 0
        /// Times the WAL was made ready to start over on the next commit: restart (and the final truncate)
        /// checkpoints that completed, and handovers.
        public var restarts = 0
        /// Of those, the ones the attached writer did itself before a transaction, without the write lock.
        public var handovers = 0
        /// True while the checkpointer waits for the attached writer's next transaction to hand over.
        public var handoverPending = false
        /// Database file syncs after passive checkpoints that copied frames (see `Worker.checkpoint`).
        public var databaseSyncs = 0
        /// Checkpoints SQLite answered `SQLITE_BUSY` (normal, see the type's documentation).
        public var busy = 0
        /// Checkpoints that failed otherwise; each was reported through `onError`.
        public var errors = 0
        /// The database page size; a WAL frame is this plus a 24-byte header.
        public var pageSize = 0

        /// The size of `walFrames` frames plus the WAL header, in bytes.
        public var walBytes: Int { walFrames == 0 ? 0 : 32 + walFrames * (pageSize + 24) }

        public init() {}
    }

    /// The database file checkpointed.
    public let path: String
    public let configuration: Configuration
    private let shared: Shared

    /// Opens a read-write connection to the existing WAL-mode database at `path` and starts checkpointing it on
    /// a new thread. Throws when the connection cannot be opened (nothing is left running then). `onError` is
    /// called on the checkpointer's thread; it should only log or count.
    public init(
        path: String, configuration: Configuration = .init(), onError: @escaping @Sendable (String) -> Void
    ) throws(SQLiteError) {
        self.path = path
        self.configuration = configuration
        shared = Shared()
        let worker = Worker(path: path, configuration: configuration, shared: shared, onError: onError)
        let thread = Thread { worker.run() }
        thread.name = "wal-checkpointer"
        shared.start(thread)
        if let error = shared.waitUntilOpened() {
            shared.exited.wait()
            throw error
        }
    }

    /// Stops the thread if `stop()` was not called (blocking, like `stop()`).
    deinit {
        stop()
    }

    /// Asks for a passive checkpoint now rather than at the end of the current interval. Cheap; pokes that
    /// arrive while one is pending are merged. Does nothing once stopped.
    public func poke() {
        shared.poke()
    }

    /// Stops the loop, waits for the checkpoint in progress, runs the final truncate checkpoint, closes the
    /// connection and returns once the thread has exited. Later calls return at once. Called from `onError`
    /// (on the checkpointer's own thread) it only asks the loop to stop.
    public func stop() {
        shared.requestStop()
        if shared.isCurrentThread { return }
        shared.exited.wait()
    }

    /// The counters as of the last checkpoint.
    public func snapshot() -> Snapshot {
        shared.snapshot()
    }

    /// Makes `writer`, the connection that commits to this database, start the WAL over itself when it has
    /// grown past the limit (a handover; see the type's documentation), instead of a restart checkpoint taking
    /// its write lock. From then on, each of its write transactions first asks the checkpointer, at the cost of
    /// a lock and a flag, whether a handover is wanted. Call it on the thread that owns `writer`, before it is
    /// used elsewhere; the writer holds the checkpointer weakly.
    public func attachWriter(_ writer: SQLiteConnection) {
        writer.beforeWriteTransaction = { [weak self] connection in
            self?.writerWillBegin(connection)
        }
        shared.attachWriter()
    }

    /// The attached writer, before a write transaction: when a handover is pending, a passive checkpoint on
    /// its own connection. If it copied everything, the transaction about to begin starts the WAL over;
    /// otherwise (another checkpoint ran, a reader pins frames) the next transaction tries again.
    private func writerWillBegin(_ connection: SQLiteConnection) {
        guard shared.handoverIsPending else { return }
        do {
            let result = try connection.checkpoint(.passive)
            _ = shared.record(result, mode: .passive, generation: walGeneration(of: path))
            if result.completed, let log = result.walFrames, log == result.checkpointedFrames {
                shared.completeHandover(failure: nil)
            }
        } catch {
            shared.completeHandover(failure: "WAL checkpointer: the writer's checkpoint before a transaction: \(error)")
        }
    }
}

// MARK: - Shared state

extension WALCheckpointer {
    /// What the checkpointer's thread and its callers share.
    ///
    /// `@unchecked Sendable` because every mutable property is read and written only while holding `lock`
    /// (`NSLock`, so `Synchronization.Mutex` and its newer platform requirement are not needed), and the
    /// semaphores and the group are thread-safe by themselves.
    fileprivate final class Shared: @unchecked Sendable {
        private let lock = NSLock()
        /// Signalled by `poke()` and `requestStop()`; the thread sleeps on it between checkpoints.
        private let wakeUp = DispatchSemaphore(value: 0)
        /// Signalled once the thread opened its connection, or failed to.
        private let opened = DispatchSemaphore(value: 0)
        /// Signalled, while holding `lock`, by whoever ends a pending handover: the writer (done or failed) or
        /// `requestStop()`. Only the one that moves `handover` away from `.pending` signals, once.
        private let handoverEnded = DispatchSemaphore(value: 0)
        /// Entered before the thread starts, left as its very last act: waiting on it joins the thread.
        let exited = DispatchGroup()

        private var thread: Thread?
        private var openError: SQLiteError?
        private var poked = false
        private var stopRequested = false
        private var writerAttached = false
        private var handover = Handover.none
        private var counters = Snapshot()
        /// The WAL position (frames, frames checkpointed) the last checkpoint reported, and the WAL generation it
        /// belongs to, to count copied frames.
        private var position: (log: Int, checkpointed: Int, generation: [UInt8]?) = (0, 0, nil)
        /// The failure last passed to `onError`, cleared by a success, so a persistent one is reported once.
        private var lastReported: String?

        func start(_ thread: Thread) {
            exited.enter()
            lock.withLock { self.thread = thread }
            thread.start()
        }

        var isCurrentThread: Bool {
            lock.withLock { thread.map { $0 === Thread.current } ?? false }
        }

        func finishOpening(pageSize: Int) {
            lock.withLock { counters.pageSize = pageSize }
            opened.signal()
        }

        func failOpening(_ error: SQLiteError) {
            lock.withLock { openError = error }
            opened.signal()
        }

        func waitUntilOpened() -> SQLiteError? {
            opened.wait()
            return lock.withLock { openError }
        }

        func poke() {
            let signal = lock.withLock {
                guard !poked, !stopRequested else { return false }
                poked = true
                return true
            }
            if signal { wakeUp.signal() }
        }

        func requestStop() {
            let signal = lock.withLock {
                guard !stopRequested else { return false }
                stopRequested = true
                if case .pending = handover {
                    handover = .abandoned
                    handoverEnded.signal()
                }
                return true
            }
            if signal { wakeUp.signal() }
        }

        func attachWriter() {
            lock.withLock { writerAttached = true }
        }

        var isWriterAttached: Bool {
            lock.withLock { writerAttached }
        }

        /// Read by the writer before every write transaction, so kept to a lock and a comparison.
        var handoverIsPending: Bool {
            lock.withLock {
                if case .pending = handover { return true }
                return false
            }
        }

        /// The writer's side: ends a pending handover (`failure` nil: the WAL was copied to its end).
        func completeHandover(failure: String?) {
            lock.withLock {
                guard case .pending = handover else { return }
                handover = failure.map(Handover.failed) ?? .caughtUp
                handoverEnded.signal()
            }
        }

        /// The checkpointer's side: asks for a handover and waits up to `timeout` for the writer to end it.
        func awaitHandover(timeout: Duration) -> Handover {
            lock.withLock { handover = .pending }
            let waited = handoverEnded.wait(
                timeout: .now() + .nanoseconds(Int(clamping: timeout.clampedNanoseconds)))
            return lock.withLock {
                let outcome = handover
                handover = .none
                switch outcome {
                case .pending:
                    return .pending  // timed out, and nobody signalled
                case .caughtUp:
                    counters.handovers += 1
                    counters.restarts += 1
                default:
                    break
                }
                // Ended just after the wait timed out: the signal was sent while holding the lock, so take it
                // now rather than leave it for the next handover's wait.
                if waited == .timedOut { handoverEnded.wait() }
                return outcome
            }
        }

        /// Sleeps until poked, stopped or `timeout` passes; false once a stop was requested.
        func waitForWork(timeout: Duration) -> Bool {
            _ = wakeUp.wait(timeout: .now() + .nanoseconds(Int(clamping: timeout.clampedNanoseconds)))
            return lock.withLock {
                poked = false
                return !stopRequested
            }
        }

        func snapshot() -> Snapshot {
            lock.withLock {
                var snapshot = counters
                if case .pending = handover { snapshot.handoverPending = true }
                return snapshot
            }
        }

        /// Where a handover stands. `pending` from the checkpointer's request until the writer or a stop ends it.
        enum Handover {
            case none, pending, caughtUp, abandoned
            case failed(String)
        }

        /// Counts a checkpoint SQLite answered for the WAL `generation`; returns the frames it copied.
        func record(
            _ result: SQLiteConnection.CheckpointResult, mode: SQLiteConnection.CheckpointMode, generation: [UInt8]?
        ) -> Int {
            lock.withLock {
                lastReported = nil
                if !result.completed { counters.busy += 1 }
                if result.completed && (mode == .restart || mode == .truncate) { counters.restarts += 1 }
                guard let log = result.walFrames, let checkpointed = result.checkpointedFrames else { return 0 }
                counters.checkpoints += 1
                // Within one generation both positions only grow (either going back also tells a new one). In a
                // new generation, every frame reported as copied was copied since the last checkpoint: the writer
                // only starts the WAL over once every frame of the old one was copied.
                let sameGeneration =
                    generation == position.generation && log >= position.log
                    && checkpointed >= position.checkpointed
                let copied = sameGeneration ? checkpointed - position.checkpointed : checkpointed
                counters.framesCheckpointed += copied
                position = (log, checkpointed, generation)
                counters.walFrames = log
                counters.walFramesCheckpointed = checkpointed
                return copied
            }
        }

        func recordDatabaseSync() {
            lock.withLock { counters.databaseSyncs += 1 }
        }

        /// Counts a failure; returns whether to report it (it differs from the last one reported).
        func recordFailure(_ message: String) -> Bool {
            lock.withLock {
                counters.errors += 1
                guard message != lastReported else { return false }
                lastReported = message
                return true
            }
        }
    }
}

// MARK: - The thread

extension WALCheckpointer {
    /// The checkpointer thread's work. Its connection never leaves `run()`.
    fileprivate struct Worker: Sendable {
        let path: String
        let configuration: Configuration
        let shared: Shared
        let onError: @Sendable (String) -> Void

        func run() {
            defer { shared.exited.leave() }
            // The busy handler's deadline (monotonic nanoseconds): in the past except around a restart or the
            // final truncate checkpoint, so nothing else this connection does ever waits for a lock.
            let deadline = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
            deadline.initialize(to: 0)
            defer { deadline.deallocate() }

            let connection: SQLiteConnection
            let frameBytes: Int
            do {
                (connection, frameBytes) = try openConnection(deadline: deadline)
            } catch {
                shared.failOpening(error)
                return
            }
            defer { connection.close() }

            // The WAL size at the last restart checkpoint that completed: until a commit starts the WAL over,
            // another restart would only take the write lock again for nothing.
            var restartedAt: Int?
            // Restarts in a row that did not complete. A busy writer leaves the write lock free only between
            // transactions and may not have within `restartBusyTimeout`, so the next try comes sooner than the
            // interval: after `restartBusyTimeout`, then twice that, and so on up to the interval.
            var failedRestarts = 0
            var sleep = configuration.interval
            while shared.waitForWork(timeout: sleep) {
                switch round(connection, deadline: deadline, frameBytes: frameBytes, restartedAt: &restartedAt) {
                case .busy:
                    failedRestarts += 1
                    let base = max(configuration.restartBusyTimeout, .milliseconds(1))
                    sleep = min(configuration.interval, base * (1 << min(failedRestarts - 1, 20)))
                case .completed, .notNeeded:
                    failedRestarts = 0
                    sleep = configuration.interval
                }
            }

            deadline.pointee = monotonicDeadline(after: configuration.finalBusyTimeout)
            if let final = checkpoint(connection, .truncate)?.result, !final.completed {
                onError(
                    "the WAL of '\(path)' was not truncated at stop: another connection still held the write lock, "
                        + "a read snapshot or the checkpoint lock after \(configuration.finalBusyTimeout); "
                        + "\(final.walFrames ?? 0) frame(s) left in it")
            }
            deadline.pointee = 0
        }

        /// Opens the checkpointer's connection; returns it with the size of one WAL frame in bytes.
        private func openConnection(
            deadline: UnsafeMutablePointer<UInt64>
        ) throws(SQLiteError) -> (SQLiteConnection, frameBytes: Int) {
            guard path != ":memory:", !path.isEmpty else {
                throw .misuse("an in-memory database has no WAL for a checkpointer to checkpoint")
            }
            // A read-write open would create a missing file; a checkpointer has no business creating databases.
            guard access(path, F_OK) == 0 else {
                throw SQLiteError(
                    code: SQLITE_CANTOPEN, message: "cannot checkpoint '\(path)': \(String(cString: strerror(errno)))")
            }
            let connection = try SQLiteConnection(path: path, mode: .readWrite)
            try connection.disableAutomaticCheckpoints()
            let pageSize: Int
            do {
                pageSize = try connection.queryOne("PRAGMA page_size") { $0.int(0) ?? 0 } ?? 0
            } catch let error as SQLiteError {
                throw error
            } catch {
                throw .misuse("reading the page size of '\(path)': \(error)")  // the row closure cannot throw
            }
            // Replaces the connection's five-second busy timeout, which would let a restart checkpoint hold the
            // writer's lock that long while waiting for a reader.
            if let db = connection.unsafeHandle {
                sqlite3_busy_handler(db, checkpointerBusyHandler, UnsafeMutableRawPointer(deadline))
            }
            shared.finishOpening(pageSize: pageSize)
            return (connection, pageSize + 24)
        }

        /// Passive checkpoints that copied more frames than this (a few deliveries' worth) are followed by another
        /// before a handover or a restart: what the last one leaves behind is what gets copied while the writer
        /// waits.
        static let catchUpFrames = 64
        /// At most this many such extra passive checkpoints per round.
        static let catchUpCheckpoints = 8

        /// What became of a round's restart.
        enum Restart {
            /// The WAL is within the limit, a reader pins part of it, or it was restarted already.
            case notNeeded
            case completed
            /// SQLite answered `SQLITE_BUSY` (or the round failed): try again soon.
            case busy
        }

        /// One round: a passive checkpoint, and a restart when the WAL has grown past the limit.
        private func round(
            _ connection: SQLiteConnection, deadline: UnsafeMutablePointer<UInt64>, frameBytes: Int,
            restartedAt: inout Int?
        ) -> Restart {
            // Restart only a WAL that is too big and that passive checkpoints copy all of: frames left over mean a
            // reader holds an older snapshot, and a restart would hold the write lock waiting for it in vain.
            let limit = configuration.walSizeLimit
            func restartable(_ result: SQLiteConnection.CheckpointResult) -> Bool {
                guard let log = result.walFrames, log == result.checkpointedFrames else { return false }
                return 32 + log * frameBytes > limit
            }
            guard var passive = checkpoint(connection, .passive), restartable(passive.result),
                passive.result.walFrames != restartedAt
            else { return .notNeeded }
            // The restart copies what was committed since the last passive checkpoint, and syncs, while it holds
            // the write lock. Each passive checkpoint copies what was committed during the one before, so under a
            // busy writer a few more in a row shrink that to what a quick one leaves behind.
            for _ in 0..<Self.catchUpCheckpoints where passive.copied > Self.catchUpFrames {
                guard let next = checkpoint(connection, .passive), restartable(next.result) else { return .notNeeded }
                passive = next
            }
            if shared.isWriterAttached {
                switch shared.awaitHandover(timeout: configuration.handoverTimeout) {
                case .caughtUp:
                    // The writer's transaction starts the WAL over; if a reader kept it from doing so, the next
                    // round finds the WAL past the limit again and asks again.
                    restartedAt = nil
                    return .completed
                case .abandoned:
                    return .notNeeded  // stopping: the final truncate checkpoint follows
                case .failed(let message):
                    if shared.recordFailure(message) { onError(message) }
                case .pending, .none:
                    break  // no write transaction began in time: a restart checkpoint instead
                }
            }
            deadline.pointee = monotonicDeadline(after: configuration.restartBusyTimeout)
            let restart = checkpoint(connection, .restart)
            deadline.pointee = 0
            guard let restart, restart.result.completed else { return .busy }
            restartedAt = restart.result.walFrames
            return .completed
        }

        /// Runs one checkpoint and counts it: what SQLite answered and how many frames it copied; `nil` when it
        /// failed (reported and counted).
        ///
        /// A passive checkpoint that copied frames is followed by a sync of the database file, here on the
        /// checkpointer's thread: SQLite skips it whenever the writer committed while the checkpoint ran, which
        /// under steady traffic is always, and the handover's checkpoint would then sync every page copied since
        /// the last one while the writer waits. Measured on a 13.8 GB database at 1,000 deliveries a second,
        /// that sync took 23 to 32 ms, against 1.6 ms for syncing 30 pages written anywhere in the same file.
        private func checkpoint(
            _ connection: SQLiteConnection, _ mode: SQLiteConnection.CheckpointMode
        ) -> (result: SQLiteConnection.CheckpointResult, copied: Int)? {
            do {
                let result = try connection.checkpoint(mode)
                let copied = shared.record(result, mode: mode, generation: walGeneration(of: path))
                if mode == .passive && copied > 0 {
                    try connection.syncDatabaseFile()
                    shared.recordDatabaseSync()
                }
                return (result, copied)
            } catch {
                let message = "WAL checkpointer: \(error)"
                if shared.recordFailure(message) { onError(message) }
                return nil
            }
        }
    }
}

/// The WAL header's checkpoint sequence number and salts (bytes 12..<24 of the `-wal` file of the database at
/// `path`), which change whenever the WAL starts over; `nil` while the file holds no header (missing, or
/// truncated to zero). Read right after a checkpoint: a writer starting the WAL over between the two could only
/// do so in the few microseconds after the checkpoint marked the last frame copied. SQLite takes no POSIX locks
/// on the `-wal` file, so opening and closing another descriptor on it cannot drop any of SQLite's locks.
private func walGeneration(of path: String) -> [UInt8]? {
    let descriptor = open(path + "-wal", O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var header = [UInt8](repeating: 0, count: 12)
    let count = header.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 12, 12) }
    return count == 12 ? header : nil
}

/// Monotonic nanoseconds (`DispatchTime`: `CLOCK_MONOTONIC` on Linux), unaffected by wall-clock changes.
private func monotonicNanoseconds() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

private func monotonicDeadline(after duration: Duration) -> UInt64 {
    let (sum, overflow) = monotonicNanoseconds().addingReportingOverflow(duration.clampedNanoseconds)
    return overflow ? .max : sum
}

/// The checkpointer connection's busy handler: retries a lock every 100 µs until the deadline `context` points
/// to (monotonic nanoseconds). Polling finely matters for a restart checkpoint's write lock: a writer that
/// commits back to back frees it only briefly between transactions, and SQLite's own handler sleeps 1, 2, 5,
/// 10 ms... between tries. SQLite stops calling the handler for the rest of a checkpoint once it returns 0,
/// so the deadline bounds the whole checkpoint's waiting, not each lock's.
private func checkpointerBusyHandler(_ context: UnsafeMutableRawPointer?, _ attempts: Int32) -> Int32 {
    guard let context else { return 0 }
    let deadline = context.assumingMemoryBound(to: UInt64.self).pointee
    guard monotonicNanoseconds() < deadline else { return 0 }
    usleep(100)
    return 1
}

extension Duration {
    /// Whole nanoseconds; zero for a negative duration, `Int64.max` for an absurdly long one.
    fileprivate var clampedNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? UInt64(Int64.max) : UInt64(whole) + UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}

extension SQLiteError {
    /// A `SQLITE_MISUSE` error this wrapper raises itself.
    static func misuse(_ message: String) -> SQLiteError {
        SQLiteError(code: SQLITE_MISUSE, message: message)
    }
}
