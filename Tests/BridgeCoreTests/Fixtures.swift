import Foundation

/// Recorded webhook bodies copied into the test bundle (`Tests/BridgeCoreTests/Fixtures/`), so tests
/// never depend on files outside the package. Names are kept from `/work/shared/fixtures/github/`.
enum Fixtures {
    /// Where SwiftPM copied the `Fixtures` folder (`resources: [.copy("Fixtures")]`).
    static var directory: URL {
        Bundle.module.url(forResource: "Fixtures", withExtension: nil)!
    }

    /// The exact bytes of one fixture file, e.g. `workflow_job.queued.attempt3.json`.
    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    /// Every fixture file name, sorted, for "all of them decode" tests.
    static func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.sorted()
    }
}
