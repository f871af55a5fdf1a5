import BridgeTestSupport
import Foundation

/// The recorded deliveries, byte-exact, from the one copy the test targets share (`TestAssets`).
enum Fixtures {
    /// The exact bytes of one fixture file.
    static func data(_ name: String) throws -> Data {
        try TestAssets.fixture(name)
    }
}
