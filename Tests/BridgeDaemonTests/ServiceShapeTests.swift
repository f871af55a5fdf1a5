import BridgeCore
import BridgeStore
import BridgeTestSupport
import Testing

@testable import BridgeDaemon

/// The service's shape: the actor owns the database and the engine and holds a value of its own
/// for each other part (`docs/ARCHITECTURE-service.md`). A new feature adds a type, not field 13.
@Suite("The service's shape")
struct ServiceShapeTests {
    /// The most stored properties `BridgeService` may have.
    static let limit = 13

    @Test("BridgeService keeps at most twelve stored properties, the database and the engine among them")
    func storedProperties() throws {
        let directory = try ScratchDirectory()
        let service = BridgeService(
            database: try BridgeDatabase(path: directory.path("bridge.sqlite")), engine: BridgeEngine(),
            configuration: BridgeConfiguration(), logger: Logger(label: "test", sink: { _ in }))
        let names = Mirror(reflecting: service).children.compactMap(\.label)
        #expect(!names.isEmpty, "the mirror sees the actor's stored properties")
        #expect(names.count <= Self.limit, "stored: \(names)")
        #expect(names.contains("database") && names.contains("engine"))
        #expect(Set(names).count == names.count)
    }
}
