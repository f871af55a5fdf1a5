import Foundation

/// One result row from either engine, read by column index the same way: the store's row
/// mappers (`deliveryRecord`, `storedRun`, …) are written once for both.
///
/// Like the rows it wraps, it is only valid during the call that receives it.
public enum StoreRow {
    case sqlite(SQLiteRow)
    case postgres(PostgresRow)

    public func isNull(_ index: Int) -> Bool {
        switch self {
        case .sqlite(let row): row.isNull(index)
        case .postgres(let row): row.isNull(index)
        }
    }

    public func int(_ index: Int) -> Int? {
        switch self {
        case .sqlite(let row): row.int(index)
        case .postgres(let row): row.int(index)
        }
    }

    public func int64(_ index: Int) -> Int64? {
        switch self {
        case .sqlite(let row): row.int64(index)
        case .postgres(let row): row.int64(index)
        }
    }

    public func bool(_ index: Int) -> Bool? {
        switch self {
        case .sqlite(let row): row.bool(index)
        case .postgres(let row): row.bool(index)
        }
    }

    public func double(_ index: Int) -> Double? {
        switch self {
        case .sqlite(let row): row.double(index)
        case .postgres(let row): row.double(index)
        }
    }

    public func string(_ index: Int) -> String? {
        switch self {
        case .sqlite(let row): row.string(index)
        case .postgres(let row): row.string(index)
        }
    }

    public func data(_ index: Int) -> Data? {
        switch self {
        case .sqlite(let row): row.data(index)
        case .postgres(let row): row.data(index)
        }
    }
}
