import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeDaemon

/// The service's shape, as `BridgeEngineShapeTests` keeps the engine's: the actor owns the
/// database and the engine, what it is built with, and one value per feature, each a type of its
/// own whose methods take the turn; every write goes through its one door (`BridgeService.turn`).
/// A new feature adds a type, not fields and extensions here (docs/ARCHITECTURE.md, "The service").
@Suite("The service's shape")
struct ServiceShapeTests {
    /// `Sources/BridgeDaemon`, found from this file's path (`Tests/BridgeDaemonTests/…`).
    static let daemon = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/BridgeDaemon")

    /// What every service holds whatever its features: its queue, the database, the engine, what
    /// it is built with, and whether the engine must be read again.
    static let plumbing: Set = [
        "queue", "database", "engine", "settings", "log", "metrics", "wakeups", "needsReload",
    ]
    /// The most feature values the service may hold.
    static let featureLimit = 8

    static func sources() throws -> [(path: String, text: String)] {
        let files = try #require(FileManager.default.enumerator(atPath: daemon.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }.sorted()
        return try files.map { ($0, try String(contentsOf: daemon.appendingPathComponent($0), encoding: .utf8)) }
    }

    @Test("BridgeService holds its plumbing and at most eight feature values, each a type of a file of its own")
    func storedProperties() throws {
        let directory = try ScratchDirectory()
        let service = BridgeService(
            database: try BridgeDatabase(path: directory.path("bridge.sqlite")), engine: BridgeEngine(),
            configuration: BridgeConfiguration(), logger: Logger(label: "test", sink: { _ in }))
        let children = Mirror(reflecting: service).children
        let names = children.compactMap(\.label)
        #expect(!names.isEmpty, "the mirror sees the actor's stored properties")
        #expect(Set(names).isSuperset(of: Self.plumbing), "stored: \(names)")
        let features = children.filter { !Self.plumbing.contains($0.label ?? "") }
        #expect(features.count <= Self.featureLimit, "features: \(features.map(\.label))")
        let sources = try Self.sources()
        for feature in features {
            let type = "\(Swift.type(of: feature.value))"
            #expect(
                sources.contains { ($0.path as NSString).lastPathComponent == type + ".swift" },
                "\(feature.label ?? "?"): \(type) is declared in \(type).swift")
        }
    }

    /// The most lines `BridgeService.swift` may have. Its entry points are thin (each feature's work
    /// is the feature's), but each is still a method of the actor, since the features' state lives
    /// there; under 400 needs that state moved into the turn with the engine.
    static let lineLimit = 560

    @Test("no extension of BridgeService, and its file stays under its line limit")
    func oneFile() throws {
        let sources = try Self.sources()
        #expect(sources.count >= 40, "the check sees the daemon's files")
        let extending = sources.filter { $0.text.contains("extension BridgeService") }.map(\.path)
        #expect(extending == [])
        let service = try #require(sources.first { $0.path == "BridgeService.swift" })
        let lines = service.text.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines < Self.lineLimit, "BridgeService.swift has \(lines) lines")
    }

    @Test("only the door opens a write transaction on the service's database, publishes and wakes the dispatcher")
    func oneDoor() throws {
        // `WaitingDeliveryCommitter` commits on a connection of its own, off the service's queue:
        // the deliveries a follower takes for the leader (docs/high-availability.md).
        let allowed: Set = ["BridgeService.swift", "Leadership/WaitingDeliveryCommitter.swift"]
        for (path, text) in try Self.sources() where !allowed.contains(path) {
            #expect(
                !text.contains(".write {") && !text.contains("database.write("), "\(path) opens a write transaction")
            #expect(!text.contains("publishSnapshot("), "\(path) publishes")
            #expect(!text.contains("takeChanges("), "\(path) saves the engine's changes")
        }
        let service = try #require(try Self.sources().first { $0.path == "BridgeService.swift" })
        #expect(service.text.components(separatedBy: "database.write").count == 2, "one transaction: the door's")
    }
}
