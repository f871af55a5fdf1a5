import BridgeCore
import BridgeStore
import Dispatch
import Foundation
import Testing

/// Failures a checkpointer passed to `onError`, collected from its thread.
private final class ErrorLog: @unchecked Sendable {
    // @unchecked: `messages` is only touched while holding `lock`.
    private let lock = NSLock()
    private var messages: [String] = []

    var onError: @Sendable (String) -> Void {
        { message in self.lock.withLock { self.messages.append(message) } }
    }

    var all: [String] { lock.withLock { messages } }
}

/// `WALCheckpointer` on real files: the writer's automatic checkpoints off, the WAL kept bounded by the
/// checkpointer's thread under a busy writer, a reader pinning an old snapshot, another checkpoint in the way,
/// the counters, and a clean stop that leaves an empty WAL and every row.
@Suite("WAL checkpointer")
struct WALCheckpointerTests {
    private let directory: TemporaryDirectory
    private let path: String

    init() throws {
        directory = try TemporaryDirectory()
        path = directory.path("wal.sqlite")
    }

    // MARK: Helpers

    /// Rows older than this lose their payload on each commit, as retention does in the daemon: pages are freed
    /// and reused, so the database file stays small while the WAL sees ~10 KB of new pages per commit.
    private static let keptPayloads: Int64 = 200

    /// A writer with the table the tests fill.
    private func openWriter(automaticCheckpoints: Bool = false) throws -> SQLiteConnection {
        let writer = try SQLiteConnection(path: path)
        try writer.execute("CREATE TABLE IF NOT EXISTS deliveries (id INTEGER PRIMARY KEY, payload BLOB)")
        if !automaticCheckpoints {
            try writer.disableAutomaticCheckpoints()
        }
        return writer
    }

    /// 10 KB of noise, made once (generating it per commit would dominate a debug build's run time).
    private static let noise: [UInt8] = {
        var generator: UInt64 = 0x9E37_79B9_7F4A_7C15
        return (0..<10_240).map { _ in
            generator ^= generator << 13
            generator ^= generator >> 7
            generator ^= generator << 17
            return UInt8(truncatingIfNeeded: generator)
        }
    }()

    /// About 10 KB, different for every id (the noise, rotated, with the id stamped at both ends), so a lost or
    /// mixed-up page shows.
    private static func payload(_ id: Int64) -> Data {
        let rotation = Int(id % 10_240)
        var bytes = Array(noise[rotation...] + noise[..<rotation])
        withUnsafeBytes(of: id.littleEndian) { stamp in
            bytes.replaceSubrange(0..<8, with: stamp)
            bytes.replaceSubrange((bytes.count - 8)..., with: stamp)
        }
        return Data(bytes)
    }

    /// Commits delivery `id` in a transaction of its own, pruning an old payload, like one webhook.
    private func commit(_ id: Int64, on writer: SQLiteConnection) throws {
        try writer.transaction {
            try writer.run(
                "INSERT INTO deliveries (id, payload) VALUES (?, ?)", [.integer(id), .blob(Self.payload(id))])
            if id > Self.keptPayloads {
                try writer.run("UPDATE deliveries SET payload = NULL WHERE id = ?", [.integer(id - Self.keptPayloads)])
            }
        }
    }

    /// The size of the WAL file on disk; 0 when there is none.
    private func walFileSize() -> Int {
        var status = stat()
        return stat(path + "-wal", &status) == 0 ? Int(status.st_size) : 0
    }

    /// Checks every row a fresh connection reads: ids 1...count, the newest payloads intact, the older pruned.
    private func expectEveryRow(upTo count: Int64, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let reader = try SQLiteConnection(path: path, mode: .readOnly)
        let rows = try reader.query("SELECT id, payload FROM deliveries ORDER BY id") { row in
            (row.int64(0) ?? 0, row.data(1))
        }
        #expect(rows.map(\.0) == Array(1...count), sourceLocation: sourceLocation)
        for (id, payload) in rows {
            let expected = id > count - Self.keptPayloads ? Self.payload(id) : nil
            #expect(payload == expected, "payload of \(id)", sourceLocation: sourceLocation)
        }
    }

    /// Polls `condition` until it holds or `timeout` (generous: only a broken checkpointer reaches it) passes.
    private func eventually(timeout: Duration = .seconds(30), _ condition: () throws -> Bool) rethrows -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if try condition() { return true }
            usleep(5_000)
        }
        return try condition()
    }

    /// One WAL frame for the default 4096-byte page.
    private static let frameBytes = 4096 + 24

    // MARK: The switch

    @Test("with automatic checkpoints off the WAL grows past 1000 pages; with them on it stays near 1000")
    func automaticCheckpointSwitch() throws {
        let automatic = try SQLiteConnection(path: directory.path("automatic.sqlite"))
        #expect(try automatic.queryOne("PRAGMA wal_autocheckpoint") { $0.int(0) } == 1000)
        let manual = try openWriter()
        #expect(try manual.queryOne("PRAGMA wal_autocheckpoint") { $0.int(0) } == 0)

        try automatic.execute("CREATE TABLE deliveries (id INTEGER PRIMARY KEY, payload BLOB)")
        for id in Int64(1)...600 {
            try commit(id, on: manual)
            try automatic.transaction {
                try automatic.run("INSERT INTO deliveries VALUES (?, ?)", [.integer(id), .blob(Self.payload(id))])
            }
        }
        var automaticWAL = stat()
        #expect(stat(directory.path("automatic.sqlite-wal"), &automaticWAL) == 0)
        let automaticFrames = Int(automaticWAL.st_size) / Self.frameBytes
        // 600 commits of ~10 KB are ~2400 frames: SQLite checkpointed at 1000 and started the WAL over.
        #expect(automaticFrames <= 1010)
        #expect(walFileSize() / Self.frameBytes > 2000)
        // Only the connection that turned them off lost its automatic checkpoints.
        let other = try SQLiteConnection(path: path)
        #expect(try other.queryOne("PRAGMA wal_autocheckpoint") { $0.int(0) } == 1000)
    }

    @Test("startCheckpointer turns the writer's automatic checkpoints off and caps its WAL; init alone does not")
    func bridgeDatabaseConvenience() throws {
        let database = try BridgeDatabase(path: path)
        #expect(try database.connection.queryOne("PRAGMA wal_autocheckpoint") { $0.int(0) } == 1000)
        #expect(try database.connection.queryOne("PRAGMA journal_size_limit") { $0.int(0) } == -1)

        let errors = ErrorLog()
        let checkpointer = try database.startCheckpointer(
            .init(interval: .seconds(3600), walSizeLimit: 8 << 20), onError: errors.onError)
        defer { checkpointer.stop() }
        #expect(try database.connection.queryOne("PRAGMA wal_autocheckpoint") { $0.int(0) } == 0)
        // Twice the restart threshold: a WAL started over is reused in place, not shrunk and regrown.
        #expect(try database.connection.queryOne("PRAGMA journal_size_limit") { $0.int(0) } == 16 << 20)
        #expect(checkpointer.path == path)
        #expect(checkpointer.snapshot().pageSize == 4096)

        let readOnly = try BridgeDatabase(path: path, readOnly: true)
        #expect(throws: SQLiteError.self) { try readOnly.startCheckpointer(onError: errors.onError) }
        #expect(try readOnly.connection.queryOne("PRAGMA wal_autocheckpoint") { $0.int(0) } == 1000)
        checkpointer.stop()
        #expect(errors.all == [])
    }

    // MARK: The loop

    @Test("a poke runs a passive checkpoint at once, without waiting for the interval")
    func pokeCheckpointsAtOnce() throws {
        let writer = try openWriter()
        let errors = ErrorLog()
        let checkpointer = try WALCheckpointer(
            path: path, configuration: .init(interval: .seconds(3600)), onError: errors.onError)
        defer { checkpointer.stop() }
        for id in Int64(1)...50 {
            try commit(id, on: writer)
        }
        #expect(checkpointer.snapshot().checkpoints == 0)

        checkpointer.poke()
        #expect(eventually { checkpointer.snapshot().checkpoints >= 1 })
        let snapshot = checkpointer.snapshot()
        // Nothing else ran in between, so that checkpoint copied the whole WAL.
        #expect(snapshot.walFrames >= 150)
        #expect(snapshot.walFramesCheckpointed == snapshot.walFrames)
        #expect(snapshot.framesCheckpointed == snapshot.walFrames)
        #expect(snapshot.walBytes == 32 + snapshot.walFrames * Self.frameBytes)
        #expect(snapshot.restarts == 0)
        #expect(snapshot.busy == 0)
        #expect(errors.all == [])
    }

    @Test("a passive checkpoint that copied frames syncs the database file itself; one with nothing to copy does not")
    func passiveCheckpointSyncsDatabaseFile() throws {
        let writer = try openWriter()
        let errors = ErrorLog()
        let checkpointer = try WALCheckpointer(
            path: path, configuration: .init(interval: .seconds(3600)), onError: errors.onError)
        defer { checkpointer.stop() }
        for id in Int64(1)...20 {
            try commit(id, on: writer)
        }
        // A checkpoint is counted when SQLite answers it, its sync once that returns: wait for both.
        checkpointer.poke()
        #expect(eventually { checkpointer.snapshot().checkpoints >= 1 && checkpointer.snapshot().databaseSyncs >= 1 })
        #expect(checkpointer.snapshot().databaseSyncs == 1)

        checkpointer.poke()  // nothing committed since: nothing copied, nothing to sync
        #expect(eventually { checkpointer.snapshot().checkpoints >= 2 })

        try commit(21, on: writer)
        checkpointer.poke()
        #expect(eventually { checkpointer.snapshot().checkpoints >= 3 && checkpointer.snapshot().databaseSyncs >= 2 })
        // One thread checkpoints and syncs in turn, so a sync after the second checkpoint would have
        // been counted before the third's: exactly two means the empty one synced nothing.
        #expect(checkpointer.snapshot().databaseSyncs == 2)
        #expect(errors.all == [])
    }

    @Test("frames are counted across a WAL that started over and grew past its old size")
    func framesCountedAcrossGenerations() throws {
        let writer = try openWriter()
        let errors = ErrorLog()
        let checkpointer = try WALCheckpointer(
            path: path, configuration: .init(interval: .seconds(3600)), onError: errors.onError)
        defer { checkpointer.stop() }
        for id in Int64(1)...20 {
            try commit(id, on: writer)
        }
        checkpointer.poke()
        #expect(eventually { checkpointer.snapshot().checkpoints >= 1 })
        let first = checkpointer.snapshot()
        #expect(first.walFrames > 0)
        #expect(first.framesCheckpointed == first.walFrames)

        // Every frame was copied and no reader is about, so the next commit starts the WAL over; 60 commits then
        // make it bigger than it was. Positions alone would look like 20 commits more in the same WAL.
        for id in Int64(21)...80 {
            try commit(id, on: writer)
        }
        checkpointer.poke()
        #expect(eventually { checkpointer.snapshot().checkpoints >= 2 })
        let second = checkpointer.snapshot()
        #expect(second.walFrames > first.walFrames)
        #expect(second.walFramesCheckpointed == second.walFrames)
        #expect(second.framesCheckpointed == first.walFrames + second.walFrames)
        #expect(errors.all == [])
    }

    /// Commits `count` deliveries with `commit` back to back, except that the writer may only be one `burst` of
    /// commits ahead of the checkpointer: at the end of each burst it waits until the checkpointer has finished
    /// a checkpoint it started after the previous burst ended. While the checkpointer keeps up the writer never
    /// pauses (so passive checkpoints never catch up with it, and only restarts keep the WAL in check); on a
    /// slow machine the waits keep the largest WAL a measure of the checkpointer's policy rather than of how
    /// much faster the machine writes than it syncs. Returns the largest WAL file seen after a commit.
    private func writeInBursts(
        _ count: Int64, burst: Int64 = 32, checkpointer: WALCheckpointer, commit: (Int64) throws -> Void
    ) throws -> Int {
        var largest = 0
        var previousBurstEnd = checkpointer.snapshot().checkpoints
        for id in Int64(1)...count {
            try commit(id)
            largest = max(largest, walFileSize())
            if id % burst == 0 {
                // A checkpointer waiting for the attached writer's handover runs no checkpoint until the
                // writer's next transaction: go on then.
                let required = previousBurstEnd + 2
                try #require(
                    eventually {
                        let snapshot = checkpointer.snapshot()
                        return snapshot.checkpoints >= required || snapshot.handoverPending
                    })
                previousBurstEnd = checkpointer.snapshot().checkpoints
            }
        }
        return largest
    }

    /// The load tests' writer commits back to back and holds the write lock nearly all the time; on a loaded
    /// 2-CPU machine a restart can miss the gaps between its transactions for more than the default 10 ms.
    /// Missing them is harmless (the next round tries again, sooner), but each miss lets the WAL grow by a
    /// burst, so the tests give restarts more time to keep the bound tight.
    private static let restartBusyTimeout = Duration.milliseconds(50)

    /// What the bounded-WAL tests allow above the limit. A round (a passive checkpoint, up to four catch-up ones
    /// and a restart) completes up to six checkpoints, each letting the writer commit another burst (~0.5 MiB),
    /// and a restart that missed the write lock adds a round.
    private static let slack = 6 << 20

    /// The same allowance for the BridgeDatabase test, whose bursts are larger: a delivery commit there writes
    /// about 14 frames (56 KiB), so a burst of 24 is about 1.3 MiB. The largest WAL measured 7.0 to 7.3 MiB on an
    /// idle 2-CPU machine and 7.0 to 9.0 MiB with both CPUs busy elsewhere; 12 MiB above the limit leaves room.
    /// (Bursts of 48 overshot by 14 to 17 MiB once the checkpointer synced the database itself, and 15 MiB in
    /// a CI run before that: the overshoot is counted in bursts, so the burst sets the bound.)
    private static let deliveryBurstSlack = 12 << 20

    @Test("under a busy writer the WAL stays bounded, and stop() leaves it empty with every row")
    func boundedUnderLoad() throws {
        let limit = 1 << 20
        let writer = try openWriter()
        try writer.execute("PRAGMA journal_size_limit = \(limit)")
        let errors = ErrorLog()
        let checkpointer = try WALCheckpointer(
            path: path,
            configuration: .init(
                interval: .milliseconds(5), walSizeLimit: limit, restartBusyTimeout: Self.restartBusyTimeout),
            onError: errors.onError)

        let commits: Int64 = 3000
        let largestWAL = try writeInBursts(commits, checkpointer: checkpointer) { try commit($0, on: writer) }
        let snapshot = checkpointer.snapshot()
        checkpointer.stop()

        #expect(largestWAL <= limit + Self.slack)
        // The test could fail: without restarts the WAL would have grown to every frame written, many times that.
        #expect(snapshot.framesCheckpointed * Self.frameBytes > 4 * (limit + Self.slack))
        #expect(snapshot.restarts >= 1)
        #expect(snapshot.handovers == 0)  // no writer attached: restart checkpoints did it
        #expect(errors.all == [])

        // The final truncate checkpoint emptied the WAL, and nothing is lost.
        #expect(walFileSize() == 0)
        #expect(checkpointer.snapshot().walFrames == 0)
        try expectEveryRow(upTo: commits)
        writer.close()
        try expectEveryRow(upTo: commits)
    }

    @Test("through BridgeDatabase: deliveries with 10 KB payloads keep a bounded WAL and all survive a stop")
    func bridgeDatabaseUnderLoad() throws {
        let limit = 1 << 20
        let database = try BridgeDatabase(path: path)
        let errors = ErrorLog()
        let checkpointer = try database.startCheckpointer(
            .init(interval: .milliseconds(5), walSizeLimit: limit, restartBusyTimeout: Self.restartBusyTimeout),
            onError: errors.onError)
        let count = 2000
        // A delivery commit writes a few frames (row, overflow pages, indexes, the pruned payload's freed pages;
        // fewer since payloads are found through a partial index and new files vacuum incrementally): bursts of 24
        // outgrow the 1 MiB limit, so the checkpointer must restart the WAL however fast the machine is. (Bursts
        // of 12 stayed under it on an idle machine, and the restart this test asserts never had to happen.)
        let largestWAL = try writeInBursts(Int64(count), burst: 24, checkpointer: checkpointer) { id in
            let index = Int(id) - 1
            let body = Self.payload(id)
            try database.connection.transaction {
                try database.insert(
                    DeliveryRecord(
                        id: "delivery-\(index)", hookID: "1", event: "workflow_job", action: "queued",
                        receivedAt: Double(index), repository: "acme/widgets", runID: 1, runAttempt: 1,
                        outcome: .applied, reason: nil, contentType: "application/json", payload: body,
                        payloadBytes: body.count))
                try database.prunePayloads(receivedBefore: Double(index - 199))
            }
        }
        let snapshot = checkpointer.snapshot()
        checkpointer.stop()
        #expect(largestWAL <= limit + Self.deliveryBurstSlack)
        // Without restarts the WAL would hold every frame written (about 110 MiB here), far past the bound.
        #expect(snapshot.framesCheckpointed * Self.frameBytes > 4 * (limit + Self.deliveryBurstSlack))
        #expect(snapshot.restarts >= 1)
        // startCheckpointer attached the database's connection: it started the WAL over itself.
        #expect(snapshot.handovers >= 1)
        #expect(walFileSize() == 0)
        #expect(errors.all == [])

        let reader = try BridgeDatabase(path: path, readOnly: true)
        for index in [0, 1, count / 2, count - 201, count - 200, count - 1] {
            let stored = try #require(try reader.delivery(id: "delivery-\(index)"))
            #expect(stored.payloadBytes == 10_240)
            #expect(stored.payload == (index >= count - 200 ? Self.payload(Int64(index) + 1) : nil), "\(index)")
        }
        let total = try reader.connection.queryOne("SELECT count(*) FROM deliveries") { $0.int(0) }
        #expect(total == count)
    }

    @Test("a reader holding an old snapshot neither fails the checkpointer nor holds up the writer")
    func readerPinningASnapshot() throws {
        let limit = 1 << 20
        let writer = try openWriter()
        try writer.execute("PRAGMA journal_size_limit = \(limit)")
        for id in Int64(1)...10 {
            try commit(id, on: writer)
        }
        let errors = ErrorLog()
        let checkpointer = try WALCheckpointer(
            path: path, configuration: .init(interval: .milliseconds(10), walSizeLimit: limit),
            onError: errors.onError)
        defer { checkpointer.stop() }

        let reader = try SQLiteConnection(path: path, mode: .readOnly)
        var id: Int64 = 10
        try reader.readTransaction {
            #expect(try reader.queryOne("SELECT count(*) FROM deliveries") { $0.int(0) } == 10)
            // Far past the limit: the checkpointer may copy nothing past the reader's snapshot, so the WAL grows,
            // and it must not try to restart it (that would hold the write lock waiting for this reader).
            while id < 1000 {
                id += 1
                try commit(id, on: writer)
                if id % 100 == 0 { checkpointer.poke() }
            }
            #expect(walFileSize() > 2 * limit)
            let pinned = checkpointer.snapshot()
            #expect(pinned.walFramesCheckpointed < pinned.walFrames || pinned.checkpoints == 0)
            // The WAL was not started over under the reader. (`busy` is not checked: a passive checkpoint
            // meeting the writer's commit mid-way also counts as busy on a loaded machine.)
            #expect(pinned.restarts == 0)
            // The reader still sees its snapshot.
            #expect(try reader.queryOne("SELECT count(*) FROM deliveries") { $0.int(0) } == 10)
        }

        // The reader is gone: the checkpointer copies everything, restarts the WAL, and the writer's next
        // commit starts it over and shrinks the file back to the journal size limit.
        #expect(eventually { checkpointer.snapshot().restarts >= 1 })
        try commit(id + 1, on: writer)
        #expect(walFileSize() <= limit)
        #expect(errors.all == [])
        checkpointer.stop()
        try expectEveryRow(upTo: id + 1)
    }

    // MARK: The handover

    /// The WAL header's checkpoint sequence number and salts, which change when the WAL starts over.
    private func walGeneration() throws -> Data {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path + "-wal"))
        defer { try? handle.close() }
        try handle.seek(toOffset: 12)
        return try handle.read(upToCount: 12) ?? Data()
    }

    /// A 256 KiB limit, and 60 deliveries of 10 KB past it; the checkpointer only works when poked.
    private func writerPastTheLimit(
        handoverTimeout: Duration, errors: ErrorLog
    ) throws -> (SQLiteConnection, WALCheckpointer) {
        let writer = try openWriter()
        let checkpointer = try WALCheckpointer(
            path: path,
            configuration: .init(interval: .seconds(3600), walSizeLimit: 256 << 10, handoverTimeout: handoverTimeout),
            onError: errors.onError)
        checkpointer.attachWriter(writer)
        for id in Int64(1)...60 {
            try commit(id, on: writer)
        }
        #expect(walFileSize() > 256 << 10)
        return (writer, checkpointer)
    }

    @Test("an attached writer starts the WAL over itself before its next transaction: no restart checkpoint")
    func writerStartsTheWALOver() throws {
        let errors = ErrorLog()
        let (writer, checkpointer) = try writerPastTheLimit(handoverTimeout: .seconds(60), errors: errors)
        defer { checkpointer.stop() }
        let before = try walGeneration()

        // Another connection, not attached, has a write transaction open while the checkpointer copies the WAL,
        // finds it past the limit and waits for the writer: a commit that came during that copy.
        let other = try openWriter()
        try other.execute("BEGIN IMMEDIATE")
        try other.run("INSERT INTO deliveries (id, payload) VALUES (?, ?)", [.integer(61), .blob(Self.payload(61))])
        checkpointer.poke()
        #expect(eventually { checkpointer.snapshot().handoverPending })
        #expect(checkpointer.snapshot().restarts == 0)
        // Its snapshot predates the copy, so it does not start the WAL over, and leaves frames not copied: a
        // transaction beginning now would not start the WAL over by itself either.
        try other.execute("COMMIT")
        #expect(try walGeneration() == before)
        #expect(checkpointer.snapshot().handoverPending)

        // The attached writer's next transaction copies what is left first, so it finds the WAL fully copied and
        // starts it over.
        try commit(62, on: writer)
        #expect(try walGeneration() != before)
        // Counted once the checkpointer's thread has woken from its wait, which on a loaded machine
        // comes after the writer ended the handover: waited for, not read at once.
        #expect(eventually { checkpointer.snapshot().handovers == 1 && !checkpointer.snapshot().handoverPending })
        let handedOver = checkpointer.snapshot()
        #expect(handedOver.handovers == 1)
        #expect(handedOver.restarts == 1)

        // A checkpoint now sees a WAL holding that one transaction's frames, all of them new.
        checkpointer.poke()
        #expect(eventually { checkpointer.snapshot().checkpoints > handedOver.checkpoints })
        let after = checkpointer.snapshot()
        #expect(after.walFrames > 0 && after.walFrames < 10)
        #expect(after.walFramesCheckpointed == after.walFrames)
        #expect(after.handovers == 1 && after.restarts == 1)
        #expect(errors.all == [])
        checkpointer.stop()
        try expectEveryRow(upTo: 62)
    }

    @Test("an attached writer that begins no transaction gets a restart checkpoint after the handover timeout")
    func idleWriterGetsARestart() throws {
        let errors = ErrorLog()
        let (writer, checkpointer) = try writerPastTheLimit(handoverTimeout: .milliseconds(50), errors: errors)
        defer { checkpointer.stop() }
        let before = try walGeneration()
        checkpointer.poke()
        #expect(eventually { checkpointer.snapshot().restarts == 1 })
        let restarted = checkpointer.snapshot()
        #expect(restarted.handovers == 0)
        #expect(!restarted.handoverPending)
        // The restart checkpoint left the WAL fully copied: the next commit starts it over.
        try commit(61, on: writer)
        #expect(try walGeneration() != before)
        #expect(errors.all == [])
        checkpointer.stop()
        try expectEveryRow(upTo: 61)
    }

    @Test("stop() during a pending handover does not wait for it, and still empties the WAL")
    func stopDuringAHandover() throws {
        let errors = ErrorLog()
        let (_, checkpointer) = try writerPastTheLimit(handoverTimeout: .seconds(3600), errors: errors)
        checkpointer.poke()
        #expect(eventually { checkpointer.snapshot().handoverPending })
        // Off the test's thread, so a stop() that waited for the handover fails the test instead of hanging it.
        let stopped = DispatchSemaphore(value: 0)
        Thread {
            checkpointer.stop()
            stopped.signal()
        }.start()
        #expect(stopped.wait(timeout: .now() + 30) == .success)
        #expect(checkpointer.snapshot().handovers == 0)
        #expect(walFileSize() == 0)
        #expect(errors.all == [])
        try expectEveryRow(upTo: 60)
    }

    @Test("SQLITE_BUSY because another connection is checkpointing is counted, not reported")
    func anotherCheckpointInTheWay() throws {
        let writer = try openWriter()
        for id in Int64(1)...20 {
            try commit(id, on: writer)
        }
        let errors = ErrorLog()
        let checkpointer = try WALCheckpointer(
            path: path, configuration: .init(interval: .seconds(3600)), onError: errors.onError)
        defer { checkpointer.stop() }

        // A reader pins the snapshot of 20 rows; 20 more go to the WAL after it.
        let reader = try SQLiteConnection(path: path, mode: .readOnly)
        try reader.execute("BEGIN")
        #expect(try reader.queryOne("SELECT count(*) FROM deliveries") { $0.int(0) } == 20)
        for id in Int64(21)...40 {
            try commit(id, on: writer)
        }

        // A truncate checkpoint on another connection takes the checkpoint lock, then holds it while it waits for
        // that reader (up to a minute).
        let path = path
        let truncated = DispatchSemaphore(value: 0)
        let blockerErrors = ErrorLog()
        let blocker = Thread {
            do {
                let other = try SQLiteConnection(path: path)
                try other.execute("PRAGMA busy_timeout = 60000")
                // It gets SQLITE_BUSY at once, without waiting, while the checkpointer holds the checkpoint lock.
                while try !other.checkpoint(.truncate).completed {}
            } catch {
                blockerErrors.onError("\(error)")
            }
            truncated.signal()
        }
        blocker.start()

        #expect(
            eventually {
                checkpointer.poke()
                return checkpointer.snapshot().busy >= 1
            })
        try reader.execute("COMMIT")
        #expect(truncated.wait(timeout: .now() + 60) == .success)
        #expect(blockerErrors.all == [])
        #expect(errors.all == [])
        #expect(checkpointer.snapshot().errors == 0)
    }

    // MARK: Starting and stopping

    @Test("stop() wakes the thread from a long interval, and a second stop() returns at once")
    func stopIsPromptAndIdempotent() throws {
        _ = try openWriter()
        let errors = ErrorLog()
        let checkpointer = try WALCheckpointer(
            path: path, configuration: .init(interval: .seconds(3600)), onError: errors.onError)
        // Off the test's thread, so a stop() that waited out the interval fails the test instead of hanging it.
        let stopped = DispatchSemaphore(value: 0)
        Thread {
            checkpointer.stop()
            stopped.signal()
            checkpointer.stop()
            stopped.signal()
        }.start()
        #expect(stopped.wait(timeout: .now() + 30) == .success)
        #expect(stopped.wait(timeout: .now() + 30) == .success)
        checkpointer.poke()
        checkpointer.stop()
        #expect(checkpointer.snapshot().checkpoints == 1)  // the final truncate checkpoint
        #expect(errors.all == [])
    }

    @Test("a missing file or an in-memory database is refused when the checkpointer starts")
    func openFailures() {
        let errors = ErrorLog()
        let missing = directory.path("missing.sqlite")
        #expect(throws: SQLiteError.self) {
            _ = try WALCheckpointer(path: missing, onError: errors.onError)
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
        #expect(throws: SQLiteError.self) {
            _ = try WALCheckpointer(path: ":memory:", onError: errors.onError)
        }
        #expect(errors.all == [])
    }
}
