import Foundation

/// The store's one connection, to SQLite or to PostgreSQL, behind the calls the store's statements
/// need: `run`, `query`, `queryOne`, `execute` and the two kinds of transaction.
///
/// The statements are written once, with SQLite's `?` parameters and values in SQLite's storage
/// classes; on PostgreSQL each `?` outside a quoted string or identifier becomes `$1`, `$2`, … (the
/// text translated once per statement) and each value its PostgreSQL twin (`blob` is `bytea`). The
/// few statements the engines spell differently (`json_extract`, `rowid`, `PRAGMA`) branch on
/// `dialect` where they are written, so what runs on each engine can be read in one place.
public final class StoreConnection {
    public enum Dialect: Sendable, Equatable {
        case sqlite
        case postgresql
    }

    enum Engine {
        case sqlite(SQLiteConnection)
        case postgres(PostgresConnection)
    }

    private(set) var engine: Engine
    /// PostgreSQL's text for each statement, by SQLite's. Bounded by the statements in the code.
    private var translated: [String: String] = [:]
    /// Opens PostgreSQL again after the server ended the session (a restart, a failover,
    /// `idle_in_transaction_session_timeout` on a leader frozen mid-transaction): the statement
    /// that met the loss fails, and the next one outside a transaction runs on a new session.
    private let reopen: (() throws -> PostgresConnection)?
    /// Transactions open on this connection: no reconnecting inside one, whose statements must
    /// all run in the same session or not at all.
    private var transactionDepth = 0

    init(_ engine: Engine, reopen: (() throws -> PostgresConnection)? = nil) {
        self.engine = engine
        self.reopen = reopen
    }

    private func reconnectIfLost() throws {
        guard transactionDepth == 0, case .postgres(let connection) = engine, !connection.isOpen, let reopen else {
            return
        }
        engine = .postgres(try reopen())
    }

    public var dialect: Dialect {
        switch engine {
        case .sqlite: .sqlite
        case .postgres: .postgresql
        }
    }

    /// Runs one or more `;`-separated statements without parameters.
    public func execute(_ sql: String) throws {
        try reconnectIfLost()
        switch engine {
        case .sqlite(let connection): try connection.execute(sql)
        case .postgres(let connection): try connection.execute(sql)
        }
    }

    /// Runs one statement; returns how many rows it inserted, changed or deleted.
    @discardableResult
    public func run(_ sql: String, _ arguments: [SQLiteValue] = []) throws -> Int {
        try reconnectIfLost()
        switch engine {
        case .sqlite(let connection):
            try connection.run(sql, arguments)
            return connection.changes
        case .postgres(let connection):
            return try connection.run(postgres(sql), arguments.map(Self.postgresValue))
        }
    }

    /// Runs one statement and maps every row with `row`.
    public func query<T>(_ sql: String, _ arguments: [SQLiteValue] = [], _ row: (StoreRow) throws -> T) throws -> [T] {
        try reconnectIfLost()
        switch engine {
        case .sqlite(let connection):
            return try connection.query(sql, arguments) { try row(.sqlite($0)) }
        case .postgres(let connection):
            return try connection.query(postgres(sql), arguments.map(Self.postgresValue)) { try row(.postgres($0)) }
        }
    }

    /// Runs one statement and maps its first row; nil when there is none.
    public func queryOne<T>(_ sql: String, _ arguments: [SQLiteValue] = [], _ row: (StoreRow) throws -> T) throws
        -> T?
    {
        try reconnectIfLost()
        switch engine {
        case .sqlite(let connection):
            return try connection.queryOne(sql, arguments) { try row(.sqlite($0)) }
        case .postgres(let connection):
            return try connection.queryOne(postgres(sql), arguments.map(Self.postgresValue)) { try row(.postgres($0)) }
        }
    }

    /// Inserts one row into a table whose key is an `id` the engine assigns, and returns that id
    /// (SQLite's rowid, PostgreSQL's identity through `RETURNING`).
    public func insertReturningID(_ sql: String, _ arguments: [SQLiteValue]) throws -> Int64 {
        try reconnectIfLost()
        switch engine {
        case .sqlite(let connection):
            try connection.run(sql, arguments)
            return connection.lastInsertRowID
        case .postgres(let connection):
            guard
                let id = try connection.queryOne(
                    postgres(sql + " RETURNING id"), arguments.map(Self.postgresValue), { $0.int64(0) })
            else { throw PostgresError(message: "INSERT … RETURNING id returned no row") }
            return id ?? 0
        }
    }

    /// A write transaction: SQLite's `BEGIN IMMEDIATE` (the write lock up front), PostgreSQL's
    /// `BEGIN` (read committed: each statement sees what committed before it).
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try reconnectIfLost()
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        switch engine {
        case .sqlite(let connection): return try connection.transaction(body)
        case .postgres(let connection): return try connection.transaction(body)
        }
    }

    /// A read transaction in which every query sees one snapshot.
    public func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try reconnectIfLost()
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        switch engine {
        case .sqlite(let connection):
            return try connection.readTransaction(body)
        case .postgres(let connection):
            return try connection.transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
        }
    }

    public func close() {
        switch engine {
        case .sqlite(let connection): connection.close()
        case .postgres(let connection): connection.close()
        }
    }

    /// `sql` with SQLite's `rowid` spelled as this engine names a row's physical address: `ctid`
    /// on PostgreSQL. Only for a delete or update that picks a batch of rows by a subquery on the
    /// same table, in the same statement, where the address cannot change in between.
    public func addressingRows(_ sql: String) -> String {
        switch dialect {
        case .sqlite: sql
        case .postgresql: sql.replacingOccurrences(of: "rowid", with: "ctid")
        }
    }

    // MARK: PostgreSQL's spelling

    private func postgres(_ sql: String) -> String {
        if let text = translated[sql] { return text }
        let text = Self.numberingParameters(sql)
        translated[sql] = text
        return text
    }

    /// `sql` with each `?` outside '…' strings, "…" identifiers and `--` comments numbered `$1`, `$2`, …
    /// SQLite's numbered `?N` (one value used twice) becomes `$N`, and a bare `?` after it takes
    /// the next number, as in SQLite.
    static func numberingParameters(_ sql: String) -> String {
        var result = ""
        result.reserveCapacity(sql.utf8.count + 16)
        var number = 0
        var quote: Character?
        var comment = false
        var previous: Character?
        /// After a `?`: the digits of its number so far (empty: none yet).
        var parameter: String?
        func endParameter() {
            guard let digits = parameter else { return }
            if let value = Int(digits) {
                number = max(number, value)
            } else {
                number += 1
                result += String(number)
            }
            parameter = nil
        }
        for character in sql {
            defer { previous = character }
            if parameter != nil {
                if character.isASCII, character.isWholeNumber {
                    parameter?.append(character)
                    result.append(character)
                    continue
                }
                endParameter()
            }
            if comment {
                if character == "\n" { comment = false }
            } else if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "-" && previous == "-" {
                comment = true
            } else if character == "?" {
                result += "$"
                parameter = ""
                continue
            }
            result.append(character)
        }
        endParameter()
        return result
    }

    /// `text` with each U+0000 replaced by U+FFFD: PostgreSQL's text cannot hold U+0000, and
    /// anyone who can open a pull request can put one in a job or branch name. The name's columns
    /// (`jobs.name`, `runs.branch`, …) read U+FFFD on PostgreSQL; the run state keeps the name as
    /// it was, since JSON writes U+0000 as the escape `\u0000`.
    static func replacingNUL(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\u{0}" ? "\u{FFFD}" : $0 }))
    }

    static func postgresValue(_ value: SQLiteValue) -> PostgresValue {
        switch value {
        case .null: .null
        case .integer(let value): .integer(value)
        case .real(let value): .real(value)
        case .text(let value): .text(value.contains("\u{0}") ? Self.replacingNUL(value) : value)
        case .blob(let value): .bytes(value)
        }
    }
}
