import BridgeCore
import CLibPQ
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One PostgreSQL connection through libpq, with a cache of prepared statements.
///
/// Like `SQLiteConnection` it is deliberately not `Sendable`: one owner (an actor on its own queue, or
/// a command) uses it at a time, because a libpq connection carries one conversation. Statements are
/// prepared once per SQL text and answer in the binary format, so `bytea` and numbers arrive without
/// text parsing; values always travel as parameters.
///
/// The connection does not reconnect by itself: a lost connection is reported
/// (`PostgresError.isConnectionLost`) and the owner opens a new one, because what must happen after
/// a loss (a leader stepping down, a transaction replayed) is the owner's decision, not libpq's.
public final class PostgresConnection {
    /// The location it was opened with, password shown as `***`: safe for logs.
    public let location: String

    /// The `PGconn *`; nil once closed.
    private var connection: OpaquePointer?
    /// Prepared statement names by SQL text. Bounded by the fixed set of SQL literals in the code.
    private var statements: [String: String] = [:]

    /// How long opening a connection may take before it fails, unless the URI says otherwise.
    public static let connectTimeoutSeconds = 10

    /// Opens a connection to `uri` (any libpq connection string or `postgresql://` URI).
    ///
    /// `application_name`, `connect_timeout` and `parameters` (more libpq keywords, such as
    /// `tcp_user_timeout`) are defaults the URI may override. Notices (the server's "relation
    /// already exists, skipping") are dropped rather than printed on stderr.
    public init(
        uri: String, applicationName: String = "pushward-bridge", parameters: [(String, String)] = []
    ) throws(PostgresError) {
        location = DatabaseLocation.redacting(uri)
        // Later keywords win over earlier ones, so the URI (expanded from `dbname`) comes last.
        let keywords = ["application_name", "connect_timeout", "client_encoding"] + parameters.map(\.0) + ["dbname"]
        let values = [applicationName, String(Self.connectTimeoutSeconds), "UTF8"] + parameters.map(\.1) + [uri]
        let handle = withCStrings(keywords) { keywordPointers in
            withCStrings(values) { valuePointers in PQconnectdbParams(keywordPointers, valuePointers, 1) }
        }
        guard let handle else {
            throw PostgresError(message: "cannot connect to \(location): libpq is out of memory")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            var error = PostgresError(result: nil, connection: handle, sql: nil)
            // libpq quotes what it could not read, a fragment of a password among it.
            error.message = "cannot connect to \(location): \(DatabaseLocation.scrubbing(error.message, of: uri))"
            error.lostLocally = true
            PQfinish(handle)
            throw error
        }
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        connection = handle
    }

    deinit {
        close()
    }

    /// Closes the connection; a session's advisory locks and `LISTEN`s end with it. Idempotent.
    public func close() {
        if let connection {
            PQfinish(connection)
        }
        connection = nil
        statements = [:]
    }

    /// True while libpq believes the connection usable (it learns of a loss at the next exchange).
    public var isOpen: Bool {
        guard let connection else { return false }
        return PQstatus(connection) == CONNECTION_OK
    }

    /// The server process serving this connection (`pg_backend_pid()`).
    public var backendPID: Int32 {
        connection.map { PQbackendPID($0) } ?? 0
    }

    /// The server's version as a number, e.g. 150018 for 15.18.
    public var serverVersion: Int {
        connection.map { Int(PQserverVersion($0)) } ?? 0
    }

    /// True inside `BEGIN` … `COMMIT`, including a transaction an error has aborted.
    public var isInTransaction: Bool {
        guard let connection else { return false }
        let status = PQtransactionStatus(connection)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    // MARK: - Statements

    /// Runs one or more `;`-separated statements without parameters (schema, migrations) through the
    /// simple query protocol. Not prepared: use `run` for anything executed repeatedly.
    public func execute(_ sql: String) throws(PostgresError) {
        let connection = try openHandle(sql)
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        try check(result, sql: sql)
    }

    /// Runs a statement that returns no rows; returns how many rows it changed.
    @discardableResult
    public func run(_ sql: String, _ arguments: [PostgresValue] = []) throws(PostgresError) -> Int {
        let result = try executePrepared(sql, arguments)
        defer { PQclear(result) }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// Runs a statement and maps every row it returns.
    public func query<T>(
        _ sql: String, _ arguments: [PostgresValue] = [], _ map: (PostgresRow) throws -> T
    ) throws -> [T] {
        let result = try executePrepared(sql, arguments)
        defer { PQclear(result) }
        let count = PQntuples(result)
        var rows: [T] = []
        rows.reserveCapacity(Int(count))
        for row in 0..<count {
            rows.append(try map(PostgresRow(result: result, row: row)))
        }
        return rows
    }

    /// The first row mapped, or nil when the statement returns none.
    public func queryOne<T>(
        _ sql: String, _ arguments: [PostgresValue] = [], _ map: (PostgresRow) throws -> T
    ) throws -> T? {
        try query(sql, arguments, map).first
    }

    /// Runs `body` inside `BEGIN` … `COMMIT`; any error rolls back and is rethrown.
    ///
    /// A rollback that fails (the connection is gone) is not reported over the body's error: the
    /// server rolls back a transaction whose session ends.
    @discardableResult
    /// `begin` opens it: `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY` gives a read snapshot.
    public func transaction<T>(begin: String = "BEGIN", _ body: () throws -> T) throws -> T {
        try execute(begin)
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            if isInTransaction {
                try? execute("ROLLBACK")
            }
            throw error
        }
    }

    // MARK: - Notifications

    /// Starts listening on `channel`; the name is quoted, so any text is a valid channel.
    public func listen(_ channel: String) throws(PostgresError) {
        try execute("LISTEN " + Self.quotedIdentifier(channel))
    }

    /// Sends `payload` to every session listening on `channel`, when the current transaction
    /// commits (at once outside a transaction).
    public func notify(_ channel: String, payload: String = "") throws(PostgresError) {
        try run("SELECT pg_notify($1, $2)", [.text(channel), .text(payload)])
    }

    /// Waits up to `timeout` seconds for notifications and returns those that arrived (possibly
    /// none); returns at once with any already received.
    public func waitForNotifications(timeout: Double) throws(PostgresError) -> [PostgresNotification] {
        let connection = try openHandle(nil)
        var received = try drainNotifications(connection)
        guard received.isEmpty else { return received }
        var descriptor = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(max(0, min(timeout, 86_400)) * 1000)
        let ready = poll(&descriptor, 1, milliseconds)
        if ready < 0, errno != EINTR {
            throw PostgresError(message: "waiting for notifications: \(String(cString: strerror(errno)))")
        }
        received = try drainNotifications(connection)
        return received
    }

    private func drainNotifications(_ connection: OpaquePointer) throws(PostgresError) -> [PostgresNotification] {
        guard PQconsumeInput(connection) == 1 else {
            throw PostgresError(result: nil, connection: connection, sql: nil)
        }
        var received: [PostgresNotification] = []
        while let notice = PQnotifies(connection) {
            received.append(
                PostgresNotification(
                    channel: String(cString: notice.pointee.relname),
                    payload: notice.pointee.extra.map { String(cString: $0) } ?? "",
                    senderPID: notice.pointee.be_pid
                )
            )
            PQfreemem(notice)
        }
        return received
    }

    // MARK: - Helpers

    /// An identifier quoted for SQL: wrapped in double quotes, inner quotes doubled.
    public static func quotedIdentifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    private func openHandle(_ sql: String?) throws(PostgresError) -> OpaquePointer {
        guard let connection else {
            var error = PostgresError(message: "the connection to \(location) is closed", sql: sql)
            error.lostLocally = true
            throw error
        }
        return connection
    }

    /// Prepares `sql` once, then executes it with `arguments`; the caller clears the result.
    private func executePrepared(_ sql: String, _ arguments: [PostgresValue]) throws(PostgresError) -> OpaquePointer {
        let connection = try openHandle(sql)
        let name = try preparedName(sql, connection)
        let wire = try arguments.map { value throws(PostgresError) in try value.wireFormat() }
        let lengths = wire.map { Int32($0?.bytes.count ?? 0) }
        let formats = wire.map { Int32(($0?.binary ?? false) ? 1 : 0) }
        // Every value in one buffer (and one spare byte, so it is never empty); each parameter
        // points into it at its own offset.
        let joined = wire.compactMap { $0?.bytes }.joined() + [0]
        let result = joined.withUnsafeBufferPointer { buffer in
            var offset = 0
            var values: [UnsafePointer<CChar>?] = wire.map { value in
                guard let value else { return nil }
                defer { offset += value.bytes.count }
                return UnsafeRawPointer(buffer.baseAddress! + offset).assumingMemoryBound(to: CChar.self)
            }
            return PQexecPrepared(connection, name, Int32(arguments.count), &values, lengths, formats, 1)
        }
        do {
            try check(result, sql: sql)
        } catch {
            PQclear(result)
            throw error
        }
        return result!
    }

    private func preparedName(_ sql: String, _ connection: OpaquePointer) throws(PostgresError) -> String {
        if let name = statements[sql] {
            return name
        }
        let name = "pushward_\(statements.count + 1)"
        let result = PQprepare(connection, name, sql, 0, nil)
        defer { PQclear(result) }
        try check(result, sql: sql)
        statements[sql] = name
        return name
    }

    private func check(_ result: OpaquePointer?, sql: String?) throws(PostgresError) {
        guard let result else {
            throw PostgresError(result: nil, connection: connection, sql: sql)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return
        default:
            throw PostgresError(result: result, connection: connection, sql: sql)
        }
    }
}

/// Calls `body` with `strings` as a NULL-terminated array of C strings, valid for the call only.
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    return body(copies.map { UnsafePointer($0) } + [nil])
}
