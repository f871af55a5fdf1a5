import CLibPQ
import Foundation

/// One row of a result, read in PostgreSQL's binary format. Valid only inside the closure it is
/// passed to, like `SQLiteRow`.
///
/// Each accessor returns nil for SQL NULL and converts from the column types the store uses; a
/// column of a type the accessor does not read is a mistake in this program's SQL (which is a fixed
/// set of literals), so it stops the process with the column's name and type rather than guess.
public struct PostgresRow {
    let result: OpaquePointer
    let row: Int32

    /// Type OIDs from `pg_type`, fixed since PostgreSQL 7.
    enum TypeOID {
        static let bool: UInt32 = 16
        static let bytea: UInt32 = 17
        static let char: UInt32 = 18
        static let name: UInt32 = 19
        static let int8: UInt32 = 20
        static let int2: UInt32 = 21
        static let int4: UInt32 = 23
        static let text: UInt32 = 25
        static let oid: UInt32 = 26
        static let json: UInt32 = 114
        static let float4: UInt32 = 700
        static let float8: UInt32 = 701
        static let bpchar: UInt32 = 1042
        static let varchar: UInt32 = 1043
        static let timestamp: UInt32 = 1114
        static let timestamptz: UInt32 = 1184
        static let jsonb: UInt32 = 3802
    }

    public var columnCount: Int { Int(PQnfields(result)) }

    /// The column's name as the statement gave it.
    public func name(_ index: Int) -> String {
        String(cString: PQfname(result, Int32(index)))
    }

    public func isNull(_ index: Int) -> Bool {
        PQgetisnull(result, row, Int32(index)) == 1
    }

    public func int(_ index: Int) -> Int? {
        int64(index).map { Int($0) }
    }

    public func int64(_ index: Int) -> Int64? {
        guard let bytes = bytes(index) else { return nil }
        switch type(index) {
        case TypeOID.int2: return Int64(Int16(bitPattern: UInt16(truncatingIfNeeded: bigEndian(bytes))))
        case TypeOID.int4: return Int64(Int32(bitPattern: UInt32(truncatingIfNeeded: bigEndian(bytes))))
        case TypeOID.oid: return Int64(UInt32(truncatingIfNeeded: bigEndian(bytes)))
        case TypeOID.int8: return Int64(bitPattern: bigEndian(bytes))
        case TypeOID.bool: return bytes.first == 0 ? 0 : 1
        default: unreadable(index, as: "an integer")
        }
    }

    public func bool(_ index: Int) -> Bool? {
        guard let bytes = bytes(index) else { return nil }
        switch type(index) {
        case TypeOID.bool: return bytes.first != 0
        case TypeOID.int2, TypeOID.int4, TypeOID.int8: return bigEndian(bytes) != 0
        default: unreadable(index, as: "a boolean")
        }
    }

    public func double(_ index: Int) -> Double? {
        guard let bytes = bytes(index) else { return nil }
        switch type(index) {
        case TypeOID.float8: return Double(bitPattern: bigEndian(bytes))
        case TypeOID.float4: return Double(Float(bitPattern: UInt32(truncatingIfNeeded: bigEndian(bytes))))
        case TypeOID.int2, TypeOID.int4, TypeOID.int8, TypeOID.oid: return int64(index).map(Double.init)
        default: unreadable(index, as: "a number")
        }
    }

    /// Text, `varchar`, `name`, `json` and `jsonb` (whose binary form is a version byte, then text).
    public func string(_ index: Int) -> String? {
        guard let bytes = bytes(index) else { return nil }
        switch type(index) {
        case TypeOID.text, TypeOID.varchar, TypeOID.bpchar, TypeOID.name, TypeOID.char, TypeOID.json:
            return String(decoding: bytes, as: UTF8.self)
        case TypeOID.jsonb:
            return String(decoding: bytes.dropFirst(), as: UTF8.self)
        default:
            unreadable(index, as: "text")
        }
    }

    /// The value's bytes: a `bytea` as stored, anything else in its binary form.
    public func data(_ index: Int) -> Data? {
        bytes(index).map { Data($0) }
    }

    /// A `timestamptz` or `timestamp` (microseconds since 2000-01-01 UTC on the wire).
    public func date(_ index: Int) -> Date? {
        guard let bytes = bytes(index) else { return nil }
        switch type(index) {
        case TypeOID.timestamptz, TypeOID.timestamp:
            let micros = Int64(bitPattern: bigEndian(bytes))
            return Date(timeIntervalSince1970: 946_684_800 + Double(micros) / 1_000_000)
        default:
            unreadable(index, as: "a timestamp")
        }
    }

    // MARK: - Wire

    private func type(_ index: Int) -> UInt32 {
        UInt32(PQftype(result, Int32(index)))
    }

    private func bytes(_ index: Int) -> UnsafeBufferPointer<UInt8>? {
        let column = Int32(index)
        guard PQgetisnull(result, row, column) == 0 else { return nil }
        let length = Int(PQgetlength(result, row, column))
        guard let start = PQgetvalue(result, row, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeRawPointer(start).withMemoryRebound(to: UInt8.self, capacity: length) {
            UnsafeBufferPointer(start: $0, count: length)
        }
    }

    /// The bytes read as one big-endian unsigned number (up to eight of them).
    private func bigEndian(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    private func unreadable(_ index: Int, as kind: String) -> Never {
        preconditionFailure("column \(index) '\(name(index))' has PostgreSQL type OID \(type(index)), not \(kind)")
    }
}
