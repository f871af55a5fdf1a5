import CLibPQ
import Foundation

/// An error reported by PostgreSQL or libpq, with enough context to act on it from a log line alone.
///
/// The SQLSTATE is what callers branch on (`23505` a unique violation, `40P01` a deadlock, class
/// `08` a lost connection); the message, detail and hint are the server's own words, and the SQL
/// says which statement failed. Connection errors never carry the password: libpq does not put it
/// in its messages, and the location is shown redacted.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// The five-character SQLSTATE, e.g. `"23505"`; nil when libpq failed before the server answered
    /// (no connection, connection lost mid-statement).
    public var sqlState: String?
    /// The primary message: the server's, or libpq's for a failure on the client side.
    public var message: String
    /// The server's detail line (which key collided, which lock), when it sent one.
    public var detail: String?
    /// The server's hint, when it sent one.
    public var hint: String?
    /// The statement that failed; nil when the failure is not tied to one (connecting).
    public var sql: String?

    public init(
        sqlState: String? = nil, message: String, detail: String? = nil, hint: String? = nil, sql: String? = nil
    ) {
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.hint = hint
        self.sql = sql
    }

    /// A `UNIQUE` or primary key constraint rejected the row.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// The server broke a deadlock by ending this transaction (40P01): it rolled back, and may be
    /// tried again.
    public var isDeadlock: Bool { sqlState == "40P01" }
    /// The connection is gone or unusable (class `08`, an administrator's termination or shutdown,
    /// an idle session timed out, or libpq lost the socket): reconnect before anything else.
    public var isConnectionLost: Bool {
        guard let sqlState else { return lostLocally }
        return sqlState.hasPrefix("08") || sqlState.hasPrefix("57P") || sqlState == "25P03"
    }
    /// Set by the connection when libpq reports the connection bad with no SQLSTATE.
    var lostLocally = false

    public var description: String {
        var text = "PostgreSQL error"
        if let sqlState {
            text += " \(sqlState)"
        }
        text += ": \(message)"
        if let detail {
            text += " (\(detail))"
        }
        if let hint {
            text += " hint: \(hint)"
        }
        if let sql {
            text += " — SQL: \(sql)"
        }
        return text
    }
}

extension PostgresError {
    /// The error in a failed result, or libpq's message on `connection` when there is no result.
    init(result: OpaquePointer?, connection: OpaquePointer?, sql: String?) {
        func field(_ code: Character) -> String? {
            guard let result, let value = PQresultErrorField(result, Int32(code.asciiValue ?? 0)) else { return nil }
            return String(cString: value)
        }
        let primary = field("M") ?? connection.flatMap { PQerrorMessage($0) }.map { String(cString: $0) } ?? ""
        self.init(
            sqlState: field("C"),
            message: primary.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
                ? "libpq reported a failure without a message" : primary.trimmingTrailingNewlines,
            detail: field("D"),
            hint: field("H"),
            sql: sql
        )
        if sqlState == nil, let connection, PQstatus(connection) != CONNECTION_OK {
            lostLocally = true
        }
    }
}

extension String {
    /// libpq ends its messages with a newline (sometimes two lines); a log line wants them on one.
    fileprivate var trimmingTrailingNewlines: String {
        split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "; ")
    }
}
