import BridgeTestSupport
import Foundation

/// Recorded webhook bodies (`Tests/BridgeCoreTests/Fixtures/`, the one copy every test target
/// reads through `TestAssets`), so tests never depend on files outside the package. Names are kept
/// from the recordings they came from.
enum Fixtures {
    static var directory: URL { TestAssets.fixtures }

    /// The exact bytes of one fixture file, e.g. `workflow_job.queued.attempt3.json`.
    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    /// Every fixture file name, sorted, for "all of them decode" tests.
    static func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.sorted()
    }
}
