import CSQLite
import Foundation

/// The current row of a query, read by column index (0-based, in `SELECT` order).
///
/// A row is a view onto a statement that SQLite advances and resets: it is only valid inside the
/// closure passed to `SQLiteConnection.query`/`queryOne`. Copy the values out; never store the row.
///
/// Every accessor returns `nil` for SQL `NULL`, so an optional column maps to an optional property
/// without a separate `isNull` check. Non-NULL values go through SQLite's own type conversions
/// (an INTEGER read as `double`, a REAL read as `int` truncates); the schema's types and `CHECK`s are
/// what keep columns honest, not this reader.
public struct SQLiteRow {
    let statement: OpaquePointer

    init(statement: OpaquePointer) {
        self.statement = statement
    }

    /// The number of columns in the result.
    public var columnCount: Int { Int(sqlite3_column_count(statement)) }

    /// The name of column `index` as SQLite reports it (the `AS` alias when there is one).
    public func name(_ index: Int) -> String {
        String(cString: sqlite3_column_name(statement, column(index)))
    }

    /// Whether column `index` is SQL `NULL`.
    public func isNull(_ index: Int) -> Bool {
        sqlite3_column_type(statement, column(index)) == SQLITE_NULL
    }

    /// Column `index` as an `Int`; `nil` for `NULL`.
    public func int(_ index: Int) -> Int? {
        int64(index).map { Int($0) }
    }

    /// Column `index` as an `Int64`; `nil` for `NULL`.
    public func int64(_ index: Int) -> Int64? {
        isNull(index) ? nil : sqlite3_column_int64(statement, column(index))
    }

    /// Column `index` read as a boolean (non-zero is `true`); `nil` for `NULL`.
    public func bool(_ index: Int) -> Bool? {
        int64(index).map { $0 != 0 }
    }

    /// Column `index` as a `Double`; `nil` for `NULL`.
    public func double(_ index: Int) -> Double? {
        isNull(index) ? nil : sqlite3_column_double(statement, column(index))
    }

    /// Column `index` as text, decoded as UTF-8 (invalid bytes become U+FFFD); `nil` for `NULL`.
    ///
    /// The length comes from `sqlite3_column_bytes`, so text with an embedded NUL is read whole.
    public func string(_ index: Int) -> String? {
        let column = column(index)
        guard sqlite3_column_type(statement, column) != SQLITE_NULL else { return nil }
        // Fetch the pointer before the length: that is the order SQLite documents as safe when a
        // conversion to text has to happen.
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// Column `index` as bytes; `nil` for `NULL`. A zero-length blob reads as empty `Data`.
    public func data(_ index: Int) -> Data? {
        let column = column(index)
        guard sqlite3_column_type(statement, column) != SQLITE_NULL else { return nil }
        guard let bytes = sqlite3_column_blob(statement, column) else { return Data() }
        let count = Int(sqlite3_column_bytes(statement, column))
        return Data(bytes: bytes, count: count)
    }

    /// Column `index` in its stored storage class.
    public func value(_ index: Int) -> SQLiteValue {
        switch sqlite3_column_type(statement, column(index)) {
        case SQLITE_INTEGER: .integer(sqlite3_column_int64(statement, column(index)))
        case SQLITE_FLOAT: .real(sqlite3_column_double(statement, column(index)))
        case SQLITE_TEXT: string(index).map { .text($0) } ?? .null
        case SQLITE_BLOB: data(index).map { .blob($0) } ?? .null
        default: .null
        }
    }

    /// The C column index for `index`, trapping on an index SQLite would answer with undefined behaviour.
    private func column(_ index: Int) -> Int32 {
        precondition(index >= 0 && index < columnCount, "column \(index) out of range 0..<\(columnCount)")
        return Int32(index)
    }
}
