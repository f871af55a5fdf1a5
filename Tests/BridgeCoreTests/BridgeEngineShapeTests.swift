import Testing

@testable import BridgeCore

/// The engine stays a composition of features: a new feature is a type of its own beside the
/// others, not one more field of the engine every extension can reach.
@Suite("engine shape")
struct BridgeEngineShapeTests {
    @Test("the engine holds at most eight stored properties, one per feature")
    func storedProperties() {
        let engine = BridgeEngine()
        let labels = Mirror(reflecting: engine).children.compactMap(\.label)
        #expect(labels.count <= 8, "stored: \(labels)")
        #expect(Mirror(reflecting: engine).children.count == labels.count)
    }
}
