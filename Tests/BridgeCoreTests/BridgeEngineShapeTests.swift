import Foundation
import Testing

@testable import BridgeCore

/// The engine stays a composition of features: a new feature is a type of its own beside the
/// others, not one more field of the engine every extension can reach, and the engine's own files
/// are filed under `Engine/`.
@Suite("engine shape")
struct BridgeEngineShapeTests {
    /// `Sources/BridgeCore`, found from this file's path (`Tests/BridgeCoreTests/…`).
    static let core = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/BridgeCore")

    @Test("the engine holds at most eight stored properties, one per feature")
    func storedProperties() {
        let engine = BridgeEngine()
        let labels = Mirror(reflecting: engine).children.compactMap(\.label)
        #expect(labels.count <= 8, "stored: \(labels)")
        #expect(Mirror(reflecting: engine).children.count == labels.count)
    }

    @Test("every extension of the engine is filed under Engine/, and named for it")
    func extensionsUnderEngine() throws {
        let files = try #require(FileManager.default.enumerator(atPath: Self.core.path))
            .compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted()
        var extending: [String] = []
        for file in files {
            let text = try String(contentsOf: Self.core.appendingPathComponent(file), encoding: .utf8)
            if text.contains("\nextension BridgeEngine ") || text.hasPrefix("extension BridgeEngine ") {
                extending.append(file)
            }
        }
        #expect(extending.count >= 10, "the check sees the engine's extensions")
        #expect(extending.filter { !$0.hasPrefix("Engine/BridgeEngine+") } == [])
        let named = files.filter { ($0 as NSString).lastPathComponent.hasPrefix("BridgeEngine+") }
        #expect(Set(named).isSubset(of: Set(extending)), "a file named for the engine extends it")
    }
}
