import Foundation

/// The recorded delivery copied byte-exact into this target's bundle
/// (`Tests/WebhookServerTests/Fixtures/`), so the tests never read files outside the package.
enum Fixtures {
    /// Where SwiftPM copied the `Fixtures` folder (`resources: [.copy("Fixtures")]`).
    static var directory: URL {
        // The folder is declared in Package.swift; a missing bundle is a build bug worth a trap.
        Bundle.module.url(forResource: "Fixtures", withExtension: nil)!
    }

    /// The exact bytes of one fixture file.
    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }
}
