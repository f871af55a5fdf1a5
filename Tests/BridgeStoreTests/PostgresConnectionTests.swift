import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// `PostgresConnection` against a real PostgreSQL server (Debian's package, started by
/// `PostgresServer`): parameters and results in both formats, errors with their SQLSTATE,
/// transactions, a lost connection, and LISTEN/NOTIFY.
@Suite struct PostgresConnectionTests {
    let uri: String

    init() throws {
        uri = try PostgresServer.shared().makeDatabase()
    }

    /// Names as a pull request could set them: bidi overrides, joiners, combining marks, astral
    /// characters, quotes and backslashes that would break naive escaping.
    static let hostileTexts = [
        "build \u{202E}dlrow\u{202C} 🧑‍💻", "e\u{0301}\u{0301}\u{0301} Z\u{0351}\u{0360}",
        "'); DROP TABLE runs; --", "\\x00\\\\ \"quoted\" $1 $$", "\u{FEFF}\u{200B}\u{2028}\u{2029}",
        "𝕳𝖔𝖘𝖙𝖎𝖑𝖊 \u{10FFFF}", "",
    ]

    @Test func textAndNumbersRoundTripThroughParameters() throws {
        let db = try PostgresConnection(uri: uri)
        try db.execute(
            "CREATE TABLE t (id bigint PRIMARY KEY, name text, ratio double precision, ok boolean, small integer)")
        for (index, text) in Self.hostileTexts.enumerated() {
            try db.run("INSERT INTO t VALUES ($1, $2, $3, $4, $5)", [.int(index), .text(text), 0.1, true, .int(-7)])
        }
        let read = try db.query("SELECT id, name, ratio, ok, small FROM t ORDER BY id") { row in
            (row.int(0), row.string(1), row.double(2), row.bool(3), row.int(4))
        }
        #expect(read.map(\.1) == Self.hostileTexts)
        #expect(read.allSatisfy { $0.2 == 0.1 && $0.3 == true && $0.4 == -7 })
        // The text is data, not SQL: the table is still there with every row.
        #expect(try db.queryOne("SELECT count(*) FROM t") { $0.int(0) } == Self.hostileTexts.count)
    }

    @Test func integerExtremesNullsAndFloatsSurvive() throws {
        let db = try PostgresConnection(uri: uri)
        let row = try db.queryOne(
            "SELECT $1::bigint, $2::bigint, $3::double precision, $4::text, $5::bigint, $6::real, $7::smallint",
            [.integer(.max), .integer(.min), .real(-1.5e-300), .null, .int(nil), 0.5, .int(-32768)]
        ) { row in
            (row.int64(0), row.int64(1), row.double(2), row.string(3), row.isNull(4), row.double(5), row.int(6))
        }
        #expect(row?.0 == .max)
        #expect(row?.1 == .min)
        #expect(row?.2 == -1.5e-300)
        #expect(row?.3 == nil)
        #expect(row?.4 == true)
        #expect(row?.5 == 0.5)
        #expect(row?.6 == -32768)
    }

    @Test func bytesTravelInBinaryUnchanged() throws {
        let db = try PostgresConnection(uri: uri)
        try db.execute("CREATE TABLE blobs (id int PRIMARY KEY, body bytea NOT NULL)")
        let bytes = Data([0, 0xFF, 0x5C, 0x78, 0, 0x27, 0x0A] + (0...255).map { UInt8($0) })
        try db.run("INSERT INTO blobs VALUES (1, $1)", [.bytes(bytes)])
        try db.run("INSERT INTO blobs VALUES (2, $1)", [.bytes(Data())])
        #expect(try db.queryOne("SELECT body FROM blobs WHERE id = 1") { $0.data(0) } == bytes)
        #expect(try db.queryOne("SELECT length(body) FROM blobs WHERE id = 1") { $0.int(0) } == bytes.count)
        #expect(try db.queryOne("SELECT body FROM blobs WHERE id = 2") { $0.data(0) } == Data())
    }

    @Test func jsonbAndTimestampsAreRead() throws {
        let db = try PostgresConnection(uri: uri)
        let json = try db.queryOne("SELECT $1::jsonb", [.text(#"{"name": "🧑‍💻 \u202e"}"#)]) { $0.string(0) }
        #expect(json == #"{"name": "🧑‍💻 ‮"}"#)
        let date = try db.queryOne("SELECT to_timestamp(1700000000.25)") { $0.date(0) }
        #expect((date ?? nil).map { abs($0.timeIntervalSince1970 - 1_700_000_000.25) < 1e-6 } == true)
    }

    @Test func textWithU0000IsRefusedBeforeItIsSent() throws {
        let db = try PostgresConnection(uri: uri)
        try db.execute("CREATE TABLE names (name text)")
        #expect {
            try db.run("INSERT INTO names VALUES ($1)", [.text("job\u{0}name")])
        } throws: { error in
            (error as? PostgresError)?.message.contains("U+0000") == true
        }
        #expect(try db.queryOne("SELECT count(*) FROM names") { $0.int(0) } == 0)
    }

    @Test func aUniqueViolationCarriesItsSQLStateDetailAndStatement() throws {
        let db = try PostgresConnection(uri: uri)
        try db.execute("CREATE TABLE keys (key text PRIMARY KEY)")
        try db.run("INSERT INTO keys VALUES ($1)", ["a"])
        do {
            try db.run("INSERT INTO keys VALUES ($1)", ["a"])
            Issue.record("the duplicate key was accepted")
        } catch {
            #expect(error.isUniqueViolation)
            #expect(error.sqlState == "23505")
            #expect(error.detail?.contains("(key)=(a)") == true)
            #expect(error.sql == "INSERT INTO keys VALUES ($1)")
            #expect(error.description.contains("23505"))
            #expect(!error.isConnectionLost)
        }
        // The same prepared statement still works after its failure.
        try db.run("INSERT INTO keys VALUES ($1)", ["b"])
        #expect(try db.queryOne("SELECT count(*) FROM keys") { $0.int(0) } == 2)
    }

    @Test func preparedStatementsArePreparedOncePerText() throws {
        let db = try PostgresConnection(uri: uri)
        for value in 0..<5 {
            #expect(try db.queryOne("SELECT $1::int + 1", [.int(value)]) { $0.int(0) } == value + 1)
        }
        let prepared = try db.queryOne("SELECT count(*) FROM pg_prepared_statements") { $0.int(0) }
        // Two texts so far: the addition, and this count itself (prepared before it runs).
        #expect(prepared == 2)
    }

    @Test func aTransactionRollsBackWhenItsBodyThrows() throws {
        let db = try PostgresConnection(uri: uri)
        try db.execute("CREATE TABLE log (line text)")
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try db.transaction {
                try db.run("INSERT INTO log VALUES ('lost')")
                throw Stop()
            }
        }
        #expect(!db.isInTransaction)
        try db.transaction { try db.run("INSERT INTO log VALUES ('kept')") }
        #expect(try db.query("SELECT line FROM log") { $0.string(0) } == ["kept"])
    }

    @Test func aTerminatedSessionIsReportedAsALostConnection() throws {
        let db = try PostgresConnection(uri: uri)
        let other = try PostgresConnection(uri: uri)
        #expect(
            try other.queryOne("SELECT pg_terminate_backend($1)", [.int(Int(db.backendPID))]) { $0.bool(0) } == true)
        do {
            _ = try db.queryOne("SELECT 1") { $0.int(0) }
            Issue.record("a terminated session answered")
        } catch let error as PostgresError {
            #expect(error.isConnectionLost, "\(error)")
        }
    }

    @Test func aRefusedConnectionNamesTheLocationWithoutThePassword() throws {
        let password = "s3cr\u{202E}t🔑"
        // Port 1 on loopback: nothing listens there.
        let uri =
            "postgresql://bridge:\(password.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)@127.0.0.1:1/db"
        do {
            _ = try PostgresConnection(uri: uri)
            Issue.record("connected to a closed port")
        } catch {
            #expect(error.isConnectionLost)
            #expect(error.message.contains("cannot connect to postgresql://bridge:***@127.0.0.1:1/db"), "\(error)")
            #expect(!error.description.contains("s3cr"))
            #expect(!error.description.contains("\n"))
        }
    }

    @Test func aNotificationReachesTheListenerWithItsPayload() throws {
        let listener = try PostgresConnection(uri: uri)
        let sender = try PostgresConnection(uri: uri)
        try listener.listen("deliveries \"new\"")
        #expect(try listener.waitForNotifications(timeout: 0.05).isEmpty)
        try sender.notify("deliveries \"new\"", payload: "run 7 🧑‍💻")
        var received: [PostgresNotification] = []
        let deadline = Date().addingTimeInterval(10)
        while received.isEmpty, Date() < deadline {
            received += try listener.waitForNotifications(timeout: 1)
        }
        #expect(
            received == [
                PostgresNotification(channel: "deliveries \"new\"", payload: "run 7 🧑‍💻", senderPID: sender.backendPID)
            ])
    }

    @Test func aNotificationInsideATransactionWaitsForTheCommit() throws {
        let listener = try PostgresConnection(uri: uri)
        let sender = try PostgresConnection(uri: uri)
        try listener.listen("wake")
        try sender.execute("BEGIN")
        try sender.notify("wake")
        #expect(try listener.waitForNotifications(timeout: 0.2).isEmpty)
        try sender.execute("COMMIT")
        var received: [PostgresNotification] = []
        let deadline = Date().addingTimeInterval(10)
        while received.isEmpty, Date() < deadline {
            received += try listener.waitForNotifications(timeout: 1)
        }
        #expect(received.map(\.channel) == ["wake"])
    }

    @Test func aClosedConnectionRefusesStatements() throws {
        let db = try PostgresConnection(uri: uri)
        db.close()
        #expect(!db.isOpen)
        #expect {
            try db.execute("SELECT 1")
        } throws: { error in
            (error as? PostgresError)?.isConnectionLost == true
        }
    }
}
