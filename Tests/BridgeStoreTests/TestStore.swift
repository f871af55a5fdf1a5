import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation

/// A test's database on `StoreEngine.current`: a file in `directory` for SQLite, a fresh
/// database on the shared test server for PostgreSQL.
enum TestStore {
    /// Where the test's database is; open it again (a restart, a reader) through the same value.
    static func location(in directory: String) throws -> DatabaseLocation {
        switch StoreEngine.current {
        case .sqlite: .sqlite(path: directory + "/bridge.sqlite")
        case .postgresql: .postgresql(uri: try PostgresServer.shared().makeDatabase())
        }
    }

    static func open(in directory: String) throws -> BridgeDatabase {
        try BridgeDatabase(location: location(in: directory))
    }
}
