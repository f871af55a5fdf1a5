import Foundation

/// A value bound to a statement parameter, in SQLite's own storage classes.
///
/// The cases mirror SQLite's five storage classes so that what is written is exactly what the column
/// holds: there is no implicit date or boolean encoding hidden in the binding layer. The static helpers
/// (`.int(_:)`, `.string(_:)`, …) exist because most columns are optional in Swift and `nil` must become
/// SQL `NULL`, not a missing argument.
public enum SQLiteValue: Sendable, Equatable {
    /// SQL `NULL`.
    case null
    /// A 64-bit signed integer, SQLite's INTEGER storage class.
    case integer(Int64)
    /// An IEEE 754 double. SQLite stores a NaN as `NULL`.
    case real(Double)
    /// UTF-8 text. Bound with `SQLITE_TRANSIENT`, so SQLite keeps its own copy.
    case text(String)
    /// Raw bytes. An empty `Data` is stored as a zero-length blob, not as `NULL`.
    case blob(Data)
}

extension SQLiteValue {
    /// An `Int` column value; `nil` becomes `NULL`.
    public static func int(_ value: Int?) -> SQLiteValue {
        value.map { .integer(Int64($0)) } ?? .null
    }

    /// An `Int64` column value; `nil` becomes `NULL`.
    public static func int64(_ value: Int64?) -> SQLiteValue {
        value.map { .integer($0) } ?? .null
    }

    /// A boolean stored as 0 or 1 (SQLite has no boolean type); `nil` becomes `NULL`.
    public static func bool(_ value: Bool?) -> SQLiteValue {
        value.map { .integer($0 ? 1 : 0) } ?? .null
    }

    /// A `Double` column value; `nil` becomes `NULL`.
    public static func double(_ value: Double?) -> SQLiteValue {
        value.map { .real($0) } ?? .null
    }

    /// A text column value; `nil` becomes `NULL` (an empty string stays an empty string).
    public static func string(_ value: String?) -> SQLiteValue {
        value.map { .text($0) } ?? .null
    }

    /// A blob column value; `nil` becomes `NULL` (empty `Data` stays a zero-length blob).
    public static func data(_ value: Data?) -> SQLiteValue {
        value.map { .blob($0) } ?? .null
    }

    /// Whether this is SQL `NULL`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension SQLiteValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) {
        self = .integer(value)
    }
}

extension SQLiteValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) {
        self = .real(value)
    }
}

extension SQLiteValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        self = .text(value)
    }
}

extension SQLiteValue: ExpressibleByBooleanLiteral {
    /// `true` and `false` are stored as 1 and 0.
    public init(booleanLiteral value: Bool) {
        self = .integer(value ? 1 : 0)
    }
}

extension SQLiteValue: CustomStringConvertible {
    /// A SQL-literal-like rendering for logs and test failures; blobs show only their size.
    public var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .text(let value): "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let value): "<blob \(value.count) bytes>"
        }
    }
}
