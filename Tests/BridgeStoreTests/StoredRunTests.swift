import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeStore

/// The run upsert (`saveRun`): what it keeps, and which columns it sets.
struct StoredRunTests {
    private let directory: ScratchDirectory
    private let database: BridgeDatabase
    private let key = RunKey(repository: "acme/widgets", runID: 7, attempt: 1)

    init() throws {
        directory = try ScratchDirectory()
        database = try BridgeDatabase(path: directory.path("bridge.sqlite"))
        // Counts statements that set `released`: an `UPDATE OF` trigger fires when the column is
        // in the statement's SET list, whether or not its value changes, which is exactly when
        // SQLite rewrites the indexes whose condition reads it (`runs_in_flight`).
        try database.connection.execute(
            """
            CREATE TEMP TABLE released_sets (n INTEGER NOT NULL);
            CREATE TEMP TRIGGER count_released_sets AFTER UPDATE OF released ON main.runs
            BEGIN INSERT INTO released_sets (n) VALUES (NEW.released); END;
            """)
    }

    private func save(released: Bool, at time: UnixTime) throws {
        let state = RunState(key: key, repository: Repository(fullName: key.repository, htmlURL: nil), at: 0)
        try database.connection.transaction {
            try database.saveRun(state, slug: "gh-7", released: released, jobs: [], at: time)
        }
    }

    private func releasedSets() throws -> [Int] {
        try database.connection.query("SELECT n FROM released_sets ORDER BY rowid") { $0.int(0) ?? -1 }
    }

    /// The rows `runs_in_flight` holds, read through that index.
    private func inFlight() throws -> Int {
        try database.connection.queryOne(
            "SELECT count(*) FROM runs INDEXED BY runs_in_flight WHERE released = 0"
        ) { $0.int(0) ?? 0 } ?? 0
    }

    @Test("a run saved again unchanged does not set released, so runs_in_flight is not rewritten")
    func unchangedReleaseIsNotWritten() throws {
        try save(released: false, at: 10)
        try save(released: false, at: 11)
        try save(released: false, at: 12)
        #expect(try releasedSets().isEmpty)
        #expect(try database.storedRun(key)?.released == false)
        #expect(try database.storedRun(key)?.updatedAt == 12)
        #expect(try inFlight() == 1)
    }

    @Test("released is kept in both directions, once per change, and the in-flight index follows")
    func releaseChangesAreKept() throws {
        try save(released: false, at: 10)
        try save(released: true, at: 11)
        #expect(try database.storedRun(key)?.released == true)
        #expect(try inFlight() == 0)
        try save(released: true, at: 12)
        try save(released: false, at: 13)
        #expect(try database.storedRun(key)?.released == false)
        #expect(try inFlight() == 1)
        #expect(try releasedSets() == [1, 0])
        // A run first saved released (an abandoned run written as it is let go of) is inserted so.
        let other = RunKey(repository: "acme/widgets", runID: 8, attempt: 1)
        let state = RunState(key: other, repository: Repository(fullName: other.repository, htmlURL: nil), at: 0)
        try database.connection.transaction {
            try database.saveRun(state, slug: "gh-8", released: true, jobs: [], at: 20)
        }
        #expect(try database.storedRun(other)?.released == true)
        #expect(try inFlight() == 1)
    }
}
