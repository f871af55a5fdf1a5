import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// `DeliveryKey`: GitHub's version-1 delivery ids stored with their clock first, so new ones sort
/// last, and every other id kept apart from them.
@Suite("delivery ids stored in time order")
struct DeliveryKeyTests {
    /// A recorded delivery (`workflow_run.in_progress`, captured with its headers): its id, when
    /// the capturing proxy received it (its `timestamp` header, ms) and the run's `updated_at`.
    static let recordedID = "16056910-a6ff-11f0-880c-569b494ebd7a"
    static let recordedReceivedAt = 1_760_227_497.179
    static let recordedRunUpdatedAt = 1_760_227_496.0

    /// A version-1 UUID made at `time`, lowercase as GitHub sends them.
    static func versionOneID(at time: Double, node: UInt64 = 0x569b_494e_bd7a) -> String {
        let ticks = UInt64(time * 10_000_000) + 0x01B2_1DD2_1381_4000
        func hex(_ value: UInt64, _ digits: Int) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: digits - text.count) + text
        }
        return [
            hex(ticks & 0xFFFF_FFFF, 8), hex(ticks >> 32 & 0xFFFF, 4), hex(ticks >> 48 & 0x0FFF | 0x1000, 4),
            hex(0x880c, 4), hex(node, 12),
        ].joined(separator: "-")
    }

    @Test("a recorded GitHub id carries the time it was sent, and is stored clock first")
    func recordedID() {
        let made = DeliveryKey.timestamp(ofID: Self.recordedID)
        #expect(made.map { abs($0 - Self.recordedReceivedAt) < 2 } == true, "\(String(describing: made))")
        #expect(made.map { abs($0 - Self.recordedRunUpdatedAt) < 2 } == true)
        #expect(DeliveryKey.stored(Self.recordedID) == "11f0-a6ff-16056910-880c-569b494ebd7a")
        #expect(DeliveryKey.id(fromStored: "11f0-a6ff-16056910-880c-569b494ebd7a") == Self.recordedID)
    }

    @Test("stored ids sort by when they were made; as sent they do not")
    func timeOrder() {
        // Two hours of deliveries 37 s apart: the low 32 bits of the clock wrap every 429 s.
        let times = (0..<200).map { 1_796_000_000 + Double($0) * 37 }
        let ids = times.map { Self.versionOneID(at: $0) }
        #expect(ids.sorted() != ids, "as sent, text order is not time order")
        let stored = ids.map(DeliveryKey.stored)
        #expect(stored.sorted() == stored)
        #expect(stored.map(DeliveryKey.id(fromStored:)) == ids)
        #expect(ids.map { DeliveryKey.timestamp(ofID: $0).map { ($0 * 1000).rounded() / 1000 } } == times)
    }

    /// Ids GitHub never sends but a header can hold: the stored shape itself, escapes of it, other
    /// UUID versions, uppercase, and hostile Unicode of the lengths the shapes test for.
    static let otherIDs: [String] = [
        "", "~", "~~", "not-a-uuid", "11f0-a6ff-16056910-880c-569b494ebd7a", "~11f0-a6ff-16056910-880c-569b494ebd7a",
        "~~11f0-a6ff-16056910-880c-569b494ebd7a", "16056910-A6FF-11F0-880C-569B494EBD7A",
        "16056910-a6ff-41f0-880c-569b494ebd7a", "16056910-a6ff-11f0-880c-569b494ebd7",
        "16056910_a6ff_11f0_880c_569b494ebd7a",
        "1605691\u{0}-a6ff-11f0-880c-569b494ebd7a", "16056910-a6ff-11f0-880c-569b494ebd7\u{e9}",
        "11f0-a6ff-16056910-880c-569b494ebd7\u{202e}", "\u{1F9E8}1f0-a6ff-16056910-880c-569b494ebd7a",
        "<script>alert(1)</script>", "'; DROP TABLE deliveries; --", String(repeating: "\u{0301}", count: 36),
        "1ffff-a6ff-16056910-880c-569b494ebd7a", "11f0-a6ff-16056910-880c-569b494ebd7a\n",
    ]

    @Test("every id comes back from its stored form, and no two ids share one", arguments: [otherIDs])
    func oneToOne(_ others: [String]) {
        let ids = others + [Self.recordedID, Self.versionOneID(at: 0), Self.versionOneID(at: 4_000_000_000)]
        for id in ids {
            #expect(DeliveryKey.id(fromStored: DeliveryKey.stored(id)) == id, "\(id.debugDescription)")
        }
        #expect(Set(ids.map(DeliveryKey.stored)).count == Set(ids).count)
        // Only version-1 UUIDs and ids of the stored shape change; a stored-shape id gains one `~`.
        #expect(DeliveryKey.stored("not-a-uuid") == "not-a-uuid")
        #expect(DeliveryKey.stored("16056910-A6FF-11F0-880C-569B494EBD7A") == "16056910-A6FF-11F0-880C-569B494EBD7A")
        #expect(
            DeliveryKey.stored("11f0-a6ff-16056910-880c-569b494ebd7a") == "~11f0-a6ff-16056910-880c-569b494ebd7a")
        #expect(DeliveryKey.timestamp(ofID: "16056910-a6ff-41f0-880c-569b494ebd7a") == nil, "version 4")
    }

    @Test("mutations of both shapes: each id comes back, and no two share a stored form")
    func mutations() {
        // A fixed-seed generator, so a failure names the same ids on every run.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let seeds = [Self.recordedID, DeliveryKey.stored(Self.recordedID)]
        let alphabet: [Character] = Array("0123456789abcdefABCDEF-~1") + ["\u{0}", "\u{e9}", "\u{202e}", "\u{1F9E8}"]
        var ids: Set<String> = []
        for _ in 0..<20_000 {
            var characters = Array(seeds[next(2)])
            for _ in 0...next(3) {
                switch next(4) {
                case 0: characters[next(characters.count)] = alphabet[next(alphabet.count)]
                case 1: characters.insert("~", at: 0)
                case 2: if !characters.isEmpty { characters.removeLast() }
                default: characters.append(alphabet[next(alphabet.count)])
                }
            }
            ids.insert(String(characters))
        }
        var stored: Set<String> = []
        for id in ids {
            let form = DeliveryKey.stored(id)
            #expect(DeliveryKey.id(fromStored: form) == id, "\(id.debugDescription)")
            stored.insert(form)
        }
        #expect(stored.count == ids.count)
        #expect(ids.contains { DeliveryKey.stored($0) != $0 }, "some mutations kept a shape")
    }

    @Test("only a version-1 id made before the cutoff (an hour's slack) may be in a row as sent")
    func legacyRule() {
        let cutoff = 1_796_000_000.0
        #expect(DeliveryKey.mayBeStoredAsSent(Self.versionOneID(at: cutoff - 86_400), legacyCutoff: cutoff))
        #expect(DeliveryKey.mayBeStoredAsSent(Self.versionOneID(at: cutoff + 1_800), legacyCutoff: cutoff))
        #expect(!DeliveryKey.mayBeStoredAsSent(Self.versionOneID(at: cutoff + 7_200), legacyCutoff: cutoff))
        #expect(!DeliveryKey.mayBeStoredAsSent(Self.versionOneID(at: cutoff - 86_400), legacyCutoff: 0), "no old rows")
        #expect(!DeliveryKey.mayBeStoredAsSent("guid-1", legacyCutoff: cutoff), "stored as sent in both layouts")
    }
}

/// The same on a store, on each engine: what a row holds, what reads give back, and rows from
/// before the layout still found by their id as sent.
@Suite("delivery ids in the store", .onEachEngine)
struct DeliveryKeyStoreTests {
    let directory: URL
    let database: BridgeDatabase

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("delivery-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        database = try TestStore.open(in: directory.path)
    }

    static func record(_ id: String, at time: UnixTime) -> DeliveryRecord {
        DeliveryRecord(
            id: id, hookID: "1", event: "workflow_job", action: "queued", receivedAt: time, repository: "acme/widgets",
            runID: 1, runAttempt: 1, outcome: .applied, reason: nil, contentType: "application/json",
            payload: Data("{}".utf8), payloadBytes: 2)
    }

    func storedIDs() throws -> [String] {
        try database.store.query("SELECT id FROM deliveries ORDER BY id", []) { $0.string(0) ?? "" }
    }

    func duplicates(_ storedID: String) throws -> Int? {
        try database.store.queryOne("SELECT duplicates FROM deliveries WHERE id = ?", [.text(storedID)]) {
            $0.int(0) ?? 0
        }
    }

    @Test("a version-1 id is kept clock first and read back as sent; a redelivery finds it")
    func storedAndReadBack() throws {
        let id = DeliveryKeyTests.recordedID
        try database.insert(Self.record(id, at: 1_760_227_497))
        try database.insert(Self.record("guid-plain", at: 1_760_227_498))
        #expect(try storedIDs() == ["11f0-a6ff-16056910-880c-569b494ebd7a", "guid-plain"])
        #expect(try database.listDeliveries().map(\.id) == ["guid-plain", id])
        #expect(try database.delivery(id: id)?.id == id)
        #expect(try database.delivery(id: "11f0-a6ff-16056910-880c-569b494ebd7a") == nil, "a stored form is no id")
        #expect(try database.hasDelivery(id))
        #expect(try database.hasDelivery("guid-plain"))
        try database.recordDuplicate(id, at: 1_760_227_600)
        #expect(try duplicates("11f0-a6ff-16056910-880c-569b494ebd7a") == 1)
    }

    @Test("a row from before the layout holds its id as sent: still a duplicate, still found")
    func rowFromBefore() throws {
        let cutoff = 1_796_000_000.0
        let old = DeliveryKeyTests.versionOneID(at: cutoff - 3_600)
        // As an older build left it: the id as sent, and the layout's cutoff at its arrival.
        try database.store.run(
            """
            INSERT INTO deliveries (id, event, received_at, outcome, payload_bytes)
            VALUES (?, 'workflow_job', ?, 'applied', 0)
            """, [.text(old), .real(cutoff - 3_599)])
        try database.store.run("UPDATE delivery_id_layout SET unordered_before = ? WHERE id = 1", [.real(cutoff)])

        #expect(try database.hasDelivery(old), "a redelivery of it is a duplicate")
        try database.recordDuplicate(old, at: cutoff + 60)
        #expect(try duplicates(old) == 1)
        #expect(try database.delivery(id: old)?.id == old)
        #expect(try database.listDeliveries().map(\.id) == [old])
        if database.isShared {
            // Another instance's redelivery, committed for the leader: counted on the old row,
            // neither stored a second time nor left waiting to be applied again.
            #expect(try !database.insertWaiting(Self.record(old, at: cutoff + 120)))
            #expect(try duplicates(old) == 2)
            #expect(try database.waitingDeliveries().isEmpty)
            #expect(try storedIDs() == [old])
        }

        // A new id is looked for in its stored form only: a row holding one as sent (which no
        // build writes) is not found, which shows the second lookup is not made.
        let new = DeliveryKeyTests.versionOneID(at: cutoff + 7_200)
        try database.store.run(
            """
            INSERT INTO deliveries (id, event, received_at, outcome, payload_bytes)
            VALUES (?, 'workflow_job', ?, 'applied', 0)
            """, [.text(new), .real(cutoff + 7_201)])
        #expect(try !database.hasDelivery(new))
    }
}

/// The migration that starts the layout, on an SQLite file an older build left.
@Suite("delivery id layout migration")
struct DeliveryKeyMigrationTests {
    @Test("the cutoff is when the newest delivery then stored arrived; 0 on a new database")
    func cutoff() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "delivery-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.path + "/old.sqlite"
        let layout = try #require(BridgeSchema.migrations.firstIndex { $0.name == "store delivery ids in time order" })
        do {
            let connection = try SQLiteConnection(path: path)
            try MigrationRunner.migrate(connection, Array(BridgeSchema.migrations.prefix(layout)))
            for (id, time) in [("a", 1_000.0), ("b", 3_000.0), ("c", 2_000.0)] {
                try connection.run(
                    """
                    INSERT INTO deliveries (id, event, received_at, outcome, payload_bytes)
                    VALUES (?, 'workflow_job', ?, 'applied', 0)
                    """, [.text(id), .real(time)])
            }
            connection.close()
        }
        let upgraded = try BridgeDatabase(path: path)
        let cutoff = try upgraded.store.queryOne("SELECT unordered_before FROM delivery_id_layout", []) {
            $0.double(0) ?? -1
        }
        #expect(cutoff == 3_000)
        let fresh = try BridgeDatabase(path: directory.path + "/new.sqlite")
        #expect(try fresh.store.queryOne("SELECT unordered_before FROM delivery_id_layout", []) { $0.double(0) } == 0)
    }
}
