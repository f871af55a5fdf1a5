import BridgeCore
import BridgeStore
import Foundation
import Testing

/// `deliveries` keyed by (UTC day received, id): a redelivery is found within the window GitHub
/// redelivers in, `delivery(id:)` finds any retained day, no index of the table starts with the
/// random id (the write pattern the key exists to avoid), and a database from before the key
/// keeps every row and rowid through the rebuild.
@Suite("deliveries keyed by day")
struct DeliveryKeyTests {
    static let day: UnixTime = 86_400
    /// Noon of a UTC day, so `± hours` stays on the same day.
    static let today: UnixTime = 20_000 * day + day / 2

    let directory: URL
    let path: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("delivery-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("bridge.sqlite").path
    }

    private func delivery(_ id: String, at time: UnixTime, payload: String? = "{}") -> DeliveryRecord {
        DeliveryRecord(
            id: id, hookID: "1", event: "workflow_job", action: "queued", receivedAt: time,
            repository: "acme/widgets", runID: 1, runAttempt: 1, outcome: .applied, reason: nil,
            contentType: "application/json", payload: payload.map { Data($0.utf8) },
            payloadBytes: payload?.utf8.count ?? 0)
    }

    @Test("the day is the UTC day: midnight starts the next one")
    func utcDay() {
        #expect(DeliveryRecord.day(of: 0) == 0)
        #expect(DeliveryRecord.day(of: Self.day - 0.001) == 0)
        #expect(DeliveryRecord.day(of: Self.day) == 1)
        #expect(DeliveryRecord.day(of: Self.today) == 20_000)
    }

    @Test("a redelivery is found up to the window's last day and counted on the first record; after it, it is new")
    func redeliveryWindow() throws {
        let database = try BridgeDatabase(path: path)
        try database.insert(delivery("guid-1", at: Self.today))
        try database.insert(delivery("guid-2", at: Self.today - Self.day))
        let window = Double(BridgeDatabase.redeliveryWindowDays)

        let first = try #require(try database.recordedDelivery("guid-1", at: Self.today + 3 * Self.day))
        #expect(try database.recordedDelivery("guid-1", at: Self.today + window * Self.day) == first)
        #expect(try database.recordedDelivery("guid-1", at: Self.today + (window + 1) * Self.day) == nil)
        #expect(try database.recordedDelivery("guid-3", at: Self.today) == nil)
        // Same day, earlier in the window, and an id of another day are told apart.
        #expect(try database.recordedDelivery("guid-2", at: Self.today) != nil)
        #expect(try database.recordedDelivery("guid-2", at: Self.today) != first)

        try database.recordDuplicate(rowID: first, at: Self.today + 60)
        try database.recordDuplicate(rowID: first, at: Self.today + 120)
        #expect(try database.delivery(id: "guid-1")?.duplicates == 2)
        #expect(try database.delivery(id: "guid-2")?.duplicates == 0)
        #expect(
            try database.connection.queryOne(
                "SELECT last_duplicate_at FROM deliveries WHERE rowid = ?", [.integer(first)]
            ) { $0.double(0) } == Self.today + 120)
    }

    @Test("the same id twice on one day is refused by the key; on two days both rows stay, the latest is read")
    func oneRowPerDayAndID() throws {
        let database = try BridgeDatabase(path: path)
        try database.insert(delivery("guid-1", at: Self.today - 40 * Self.day, payload: #"{"n":1}"#))
        #expect(throws: SQLiteError.self) {
            try database.insert(delivery("guid-1", at: Self.today - 40 * Self.day + 60))
        }
        try database.insert(delivery("guid-1", at: Self.today, payload: #"{"n":2}"#))
        try database.insert(delivery("other", at: Self.today + 60))
        #expect(try database.delivery(id: "guid-1")?.payload == Data(#"{"n":2}"#.utf8))
        #expect(try database.delivery(id: "guid-1")?.receivedAt == Self.today)
        #expect(try database.listDeliveries().map(\.id) == ["other", "guid-1", "guid-1"])
        #expect(try database.delivery(id: "missing") == nil)
        // An empty table has no days to look in, and says so without an error.
        let empty = try BridgeDatabase(path: directory.appendingPathComponent("empty.sqlite").path)
        #expect(try empty.delivery(id: "guid-1") == nil)
        #expect(try empty.recordedDelivery("guid-1", at: Self.today) == nil)
    }

    @Test("no index of deliveries starts with the random id: each new delivery would write a leaf of its own")
    func noIndexStartsWithTheID() throws {
        let database = try BridgeDatabase(path: path)
        let indexes = try database.connection.query("SELECT name FROM pragma_index_list('deliveries')") {
            $0.string(0) ?? ""
        }
        #expect(indexes.contains("deliveries_by_day"))
        for index in indexes {
            let first = try database.connection.queryOne(
                "SELECT name FROM pragma_index_info(?) WHERE seqno = 0", [.text(index)]
            ) { $0.string(0) }
            #expect(first != "id", "\(index) starts with id")
        }
        let key = try database.connection.query("SELECT name FROM pragma_index_info('deliveries_by_day')") {
            $0.string(0) ?? ""
        }
        #expect(key == ["day", "id"])
    }

    @Test("a database from before the key keeps every row, rowid, payload and count through the rebuild")
    func migrationKeepsEveryRow() throws {
        let keyed = "key deliveries by the day they arrived, so new ones land together"
        let before = Array(BridgeSchema.migrations.prefix { $0.name != keyed })
        #expect(before.count < BridgeSchema.migrations.count)
        let payload = PayloadCompression.stored(Data(String(repeating: #"{"step":"build"},"#, count: 50).utf8))
        #expect(payload.encoding == .lz4)
        do {
            let old = try SQLiteConnection(path: path)
            try MigrationRunner.migrate(old, before)
            // Ids in random order, times over three days; one row with a compressed payload and a
            // duplicate count, one rejected without a run, rowids with a gap.
            let rows: [(rowid: Int64, id: String, at: UnixTime)] = [
                (1, "f3", Self.today - 2 * Self.day), (2, "a1", Self.today - Self.day), (7, "c9", Self.today),
            ]
            for row in rows {
                try old.run(
                    """
                    INSERT INTO deliveries (rowid, id, event, received_at, repository, run_id, run_attempt, outcome,
                        payload, payload_bytes, payload_encoding, duplicates, last_duplicate_at)
                    VALUES (?, ?, 'workflow_job', ?, 'acme/widgets', 5, 1, 'applied', ?, 850, 'lz4', 2, ?)
                    """,
                    [.integer(row.rowid), .text(row.id), .real(row.at), .blob(payload.bytes), .real(row.at + 1)])
            }
            try old.run(
                """
                INSERT INTO deliveries (rowid, id, event, received_at, outcome, reason, payload_bytes)
                VALUES (9, 'b2', 'workflow_job', ?, 'rejected', 'not JSON', 3)
                """, [.real(Self.today + 10)])
            old.close()
        }
        var progress: [MigrationProgress] = []
        let database = try BridgeDatabase(path: path) { progress.append($0) }
        #expect(progress.map(\.name).prefix(2) == [keyed, keyed])
        #expect(progress[1].elapsed != nil)

        let stored = try database.connection.query("SELECT rowid, id, day FROM deliveries ORDER BY rowid") {
            "\($0.int(0) ?? 0) \($0.string(1) ?? "") \($0.int(2) ?? 0)"
        }
        #expect(stored == ["1 f3 19998", "2 a1 19999", "7 c9 20000", "9 b2 20000"])
        let row = try #require(try database.delivery(id: "a1"))
        #expect(row.payload == Data(String(repeating: #"{"step":"build"},"#, count: 50).utf8))
        #expect(row.duplicates == 2 && row.runID == 5 && row.outcome == .applied)
        #expect(try database.delivery(id: "b2")?.reason == "not JSON")
        #expect(try database.listDeliveries().map(\.id) == ["b2", "c9", "a1", "f3"])
        #expect(
            try database.listDeliveries(run: RunKey(repository: "acme/widgets", runID: 5, attempt: 1)).map(\.id)
                == ["c9", "a1", "f3"])
        #expect(try database.recordedDelivery("f3", at: Self.today) == 1)
        // The indexes the other reads and retention use are back under their names.
        let indexes = Set(
            try database.connection.query("SELECT name FROM pragma_index_list('deliveries')") { $0.string(0) ?? "" })
        #expect(
            indexes == ["deliveries_by_day", "deliveries_by_time", "deliveries_by_run", "deliveries_with_payload"])
        #expect(try database.prunePayloads(receivedBefore: Self.today - Self.day / 2) == 2)
        #expect(try database.connection.queryOne("PRAGMA integrity_check") { $0.string(0) } == "ok")
        // New rows continue after the highest rowid kept.
        try database.insert(delivery("new", at: Self.today + 20))
        #expect(try database.recordedDelivery("new", at: Self.today) == 10)
    }
}
