import Foundation
import Testing

/// The layers of `Package.swift`, checked in the sources: the core holds the domain and sees no
/// I/O library. A new `import` that breaks a layer fails here, before it spreads.
@Suite("Module layers")
struct LayeringTests {
    /// The repository's `Sources`, found from this file's path (`Tests/BridgeCoreTests/…`).
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// Each Swift file of a target with the modules it imports (`import X`, `@testable import X`,
    /// `@_exported import X`, `import struct X.Y`).
    static func imports(of target: String) throws -> [(file: String, module: String)] {
        let directory = sources.appendingPathComponent(target)
        let files = try #require(FileManager.default.enumerator(atPath: directory.path))
            .compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted()
        var found: [(String, String)] = []
        for file in files {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                var words = line.split(separator: " ").map(String.init)
                while let first = words.first, first.hasPrefix("@") { words.removeFirst() }
                guard words.first == "import", words.count >= 2 else { continue }
                let path = words.count >= 3 ? words[2] : words[1]
                found.append((file, String(path.split(separator: ".")[0])))
            }
        }
        return found
    }

    static func forbidden(in target: String, allowed: Set<String>) throws -> [String] {
        try imports(of: target).filter { !allowed.contains($0.module) }.map { "\(target)/\($0.file): \($0.module)" }
    }

    @Test("BridgeCore imports Foundation only")
    func coreImportsOnlyFoundation() throws {
        #expect(try Self.imports(of: "BridgeCore").count > 10)
        #expect(try Self.forbidden(in: "BridgeCore", allowed: ["Foundation"]) == [])
    }

    /// The core parses what GitHub and PushWard send; the one unsafe pointer it may hold is the
    /// writers' byte buffer, which owns its allocation and reads nothing from outside.
    @Test("BridgeCore uses unsafe pointers in JSONByteBuffer only")
    func coreHoldsNoUnsafePointerButTheBuffer() throws {
        let directory = Self.sources.appendingPathComponent("BridgeCore")
        let files = try #require(FileManager.default.enumerator(atPath: directory.path))
            .compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted()
        #expect(files.count > 10)
        var using: [String] = []
        for file in files {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            if text.contains("Unsafe") || text.contains("withUnsafe") || text.contains("unsafeBitCast") {
                using.append(file)
            }
        }
        #expect(using == ["JSON/JSONByteBuffer.swift"])
    }

    @Test("the check sees a forbidden import: BridgeStore imports CSQLite")
    func checkCatchesAnImport() throws {
        #expect(
            try Self.forbidden(in: "BridgeStore", allowed: ["Foundation", "BridgeCore"]).contains {
                $0.hasSuffix(": CSQLite")
            })
    }
}
