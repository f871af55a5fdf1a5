import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// The one row `runs list`, `/api/runs` and the status page share: which attempt owns its
/// activity, and whether that activity still shows.
@Suite("run listing", .onEachEngine)
struct RunListingTests {
    let database: BridgeDatabase

    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "run-listing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        database = try TestStore.open(in: directory.path)
    }

    func run(_ id: Int, slug: String, updatedAt: UnixTime) throws {
        try database.store.run(
            """
            INSERT INTO runs (repository, run_id, attempt, status, slug, first_seen_at, updated_at, state)
            VALUES ('acme/widgets', ?, 1, 'completed', ?, ?, ?, '{}')
            """, [.integer(Int64(id)), .text(slug), .real(updatedAt), .real(updatedAt)])
    }

    func activity(_ slug: String, owner: Int?, phase: String) throws {
        try database.store.run(
            """
            INSERT INTO activities (slug, name, owner_repository, owner_run_id, owner_attempt, phase, session, updated_at)
            VALUES (?, 'widgets', ?, ?, ?, ?, '{}', 0)
            """,
            [
                .text(slug), owner == nil ? .null : .text("acme/widgets"), owner.map { .integer(Int64($0)) } ?? .null,
                owner == nil ? .null : .integer(1), .text(phase),
            ])
    }

    @Test("the owner's phase comes with its row: live and ended owners both own, only the live one holds")
    func ownership() throws {
        try run(1, slug: "gh-1", updatedAt: 10)
        try run(2, slug: "gh-1", updatedAt: 20)  // same slug, not the owner
        try run(3, slug: "gh-3", updatedAt: 30)
        try run(4, slug: "gh-4", updatedAt: 40)  // an activity nobody owns
        try run(5, slug: "gh-5", updatedAt: 50)  // no activity row at all
        try activity("gh-1", owner: 1, phase: "live")
        try activity("gh-3", owner: 3, phase: "ended")
        try activity("gh-4", owner: nil, phase: "needsCreate")

        let rows = Dictionary(uniqueKeysWithValues: try database.listRuns().map { ($0.key.runID, $0) })
        #expect(rows[1]?.ownerPhase == .live)
        #expect(rows[2]?.ownerPhase == nil)
        #expect(rows[3]?.ownerPhase == .ended)
        #expect(rows[4]?.ownerPhase == nil)
        #expect(rows[5]?.ownerPhase == nil)
        #expect(rows.values.filter(\.ownsActivity).map(\.key.runID).sorted() == [1, 3])
        #expect(rows.values.filter(\.holdsLiveActivity).map(\.key.runID) == [1])
    }
}
