import Foundation

/// Where the tests find what they share: the recorded GitHub payloads (one copy, in
/// `Tests/BridgeCoreTests/Fixtures`, with the golden request streams and the fuzzers' inputs) and
/// the built `pushward-bridge` executable that end-to-end tests run.
///
/// Found from this file's path and the test process's own executable rather than copied into each
/// test target's resource bundle: a fixture exists once, and every test target reads the same bytes.
public enum TestAssets {
    /// `Tests/BridgeCoreTests/Fixtures` of this checkout.
    public static let fixtures: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/BridgeCoreTests/Fixtures")

    /// The exact bytes of one recorded fixture, e.g. `workflow_job.queued.attempt3.json`.
    public static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    /// Every recorded payload's file name, sorted.
    public static func fixtureNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: fixtures.path).filter { $0.hasSuffix(".json") }.sorted()
    }

    /// The `pushward-bridge` executable SwiftPM built beside the test executable (same build
    /// directory, whatever the configuration or sanitizer).
    public static var builtBinary: URL {
        let running =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: running).deletingLastPathComponent().appendingPathComponent("pushward-bridge")
    }
}
