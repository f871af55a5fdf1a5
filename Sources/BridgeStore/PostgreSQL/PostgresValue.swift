import Foundation

/// A value bound to a `$n` parameter of a PostgreSQL statement.
///
/// Numbers, booleans and text travel in PostgreSQL's text format and take the type the server
/// infers for the parameter from the statement (write a cast such as `$1::bigint` where it cannot
/// infer one); bytes travel in the binary format, so a `bytea` is sent as it is, without escaping.
public enum PostgresValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case boolean(Bool)
    case text(String)
    case bytes(Data)
}

extension PostgresValue {
    public static func int(_ value: Int?) -> PostgresValue {
        value.map { .integer(Int64($0)) } ?? .null
    }

    public static func int64(_ value: Int64?) -> PostgresValue {
        value.map { .integer($0) } ?? .null
    }

    public static func bool(_ value: Bool?) -> PostgresValue {
        value.map { .boolean($0) } ?? .null
    }

    public static func double(_ value: Double?) -> PostgresValue {
        value.map { .real($0) } ?? .null
    }

    public static func string(_ value: String?) -> PostgresValue {
        value.map { .text($0) } ?? .null
    }

    public static func data(_ value: Data?) -> PostgresValue {
        value.map { .bytes($0) } ?? .null
    }

    /// The parameter's bytes as libpq sends them, and whether that is the binary format; nil for NULL.
    ///
    /// Text cannot hold U+0000 in PostgreSQL (libpq also ends a text parameter at its first zero
    /// byte), so such text is refused here instead of arriving cut short.
    func wireFormat() throws(PostgresError) -> (bytes: [UInt8], binary: Bool)? {
        switch self {
        case .null:
            return nil
        case .integer(let value):
            return (Array(String(value).utf8) + [0], false)
        case .real(let value):
            guard value.isFinite else {
                return (Array((value.isNaN ? "NaN" : value < 0 ? "-Infinity" : "Infinity").utf8) + [0], false)
            }
            // Swift prints the shortest text that reads back as the same Double.
            return (Array("\(value)".utf8) + [0], false)
        case .boolean(let value):
            return (Array((value ? "true" : "false").utf8) + [0], false)
        case .text(let value):
            let utf8 = Array(value.utf8)
            guard !utf8.contains(0) else {
                throw PostgresError(message: "text parameter contains U+0000, which PostgreSQL text cannot hold")
            }
            return (utf8 + [0], false)
        case .bytes(let value):
            return ([UInt8](value), true)
        }
    }
}

extension PostgresValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) {
        self = .integer(value)
    }
}

extension PostgresValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) {
        self = .real(value)
    }
}

extension PostgresValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        self = .text(value)
    }
}

extension PostgresValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) {
        self = .boolean(value)
    }
}
