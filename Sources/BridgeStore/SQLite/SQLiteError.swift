import CSQLite

/// An error reported by SQLite, with enough context to act on it from a log line alone.
///
/// Like GRDB's `DatabaseError`, it carries the primary result code (what callers branch on), the
/// extended code (which constraint, which I/O failure), SQLite's message, and the SQL that failed.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The primary result code, e.g. 19 (`SQLITE_CONSTRAINT`) or 5 (`SQLITE_BUSY`).
    public var code: Int32
    /// The extended result code, e.g. 2067 (`SQLITE_CONSTRAINT_UNIQUE`). Equal to `code` when SQLite
    /// gives no refinement.
    public var extendedCode: Int32
    /// SQLite's message (`sqlite3_errmsg`), or this wrapper's own explanation for misuse it detects.
    public var message: String
    /// The statement that failed; `nil` when the failure is not tied to one (opening, closing).
    public var sql: String?

    public init(code: Int32, extendedCode: Int32? = nil, message: String, sql: String? = nil) {
        self.code = code
        self.extendedCode = extendedCode ?? code
        self.message = message
        self.sql = sql
    }

    /// Another connection (or process) held a lock for longer than the busy timeout; retrying later
    /// may succeed.
    public var isBusy: Bool { code == SQLITE_BUSY }

    /// A `UNIQUE`, `NOT NULL`, `CHECK`, `PRIMARY KEY` or foreign key constraint rejected the change;
    /// `extendedCode` says which kind.
    public var isConstraintViolation: Bool { code == SQLITE_CONSTRAINT }

    public var description: String {
        var text = "SQLite error \(code)"
        if extendedCode != code {
            text += " (extended \(extendedCode))"
        }
        text += ": \(message)"
        if let sql {
            text += " — SQL: \(sql)"
        }
        return text
    }
}

extension SQLiteError {
    /// The error SQLite last recorded on `db`, for a call that returned `result`.
    ///
    /// `result` wins over `sqlite3_errcode` for the primary code because some calls (`sqlite3_close`,
    /// misuse checks) return a code without recording it on the handle.
    init(result: Int32, db: OpaquePointer?, sql: String?) {
        let primary = result & 0xFF
        // The handle describes this failure only if it recorded the same primary code; otherwise its
        // message is stale (or "not an error") and SQLite's generic text for `result` is more honest.
        if let db, sqlite3_errcode(db) & 0xFF == primary {
            let extended = sqlite3_extended_errcode(db)
            self.init(code: primary, extendedCode: extended, message: String(cString: sqlite3_errmsg(db)), sql: sql)
        } else {
            self.init(code: primary, extendedCode: result, message: String(cString: sqlite3_errstr(result)), sql: sql)
        }
    }
}
