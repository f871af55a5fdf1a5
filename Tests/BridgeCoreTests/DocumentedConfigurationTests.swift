import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

/// docs/configuration.md (the source of `pushward-bridge.json(5)`) documents exactly the keys the
/// parser accepts: the keys it reads from documents that have every section between them
/// (`Fixtures/config/every-section*.json`; a GitHub App's keys exclude the token's), noted by
/// `ConfigurationKeyLog`.
@Suite("the configuration reference matches the parser")
struct DocumentedConfigurationTests {
    static let fixtureNames = ["every-section.json", "every-section-github-app.json"]

    static func fixtures() throws -> [Data] {
        try fixtureNames.map { try Data(contentsOf: TestAssets.fixtures.appendingPathComponent("config/\($0)")) }
    }

    /// The keys the parser reads from the documents, which must parse.
    static func acceptedKeys(_ documents: [Data]) throws -> Set<String> {
        let log = ConfigurationKeyLog()
        for document in documents { _ = try BridgeConfiguration(json: document, keyLog: log) }
        return log.keys
    }

    /// Every key path `value` holds, lists' entries as `[]`, comments (`_…`) left out.
    static func paths(_ value: JSONValue, prefix: String = "") -> Set<String> {
        var paths: Set<String> = []
        if let object = value.objectValue {
            for (name, child) in object where !name.hasPrefix("_") {
                let path = prefix.isEmpty ? name : prefix + "." + name
                paths.insert(path)
                paths.formUnion(Self.paths(child, prefix: path))
            }
        } else if let array = value.arrayValue {
            for element in array { paths.formUnion(Self.paths(element, prefix: prefix + "[]")) }
        }
        return paths
    }

    @Test("every key the parser reads is in the fixture, so the keys under it were read too")
    func fixtureHasEverySection() throws {
        let documents = try Self.fixtures()
        var present: Set<String> = []
        for document in documents { present.formUnion(Self.paths(try JSONValue(parsing: document))) }
        let missing = try Self.acceptedKeys(documents).subtracting(present).sorted()
        #expect(missing.isEmpty, "add to Fixtures/config/every-section.json: \(missing)")
    }

    @Test("every key the parser accepts is documented in docs/configuration.md, and no other")
    func documentedKeysMatch() throws {
        let accepted = try Self.acceptedKeys(try Self.fixtures())
        let documented = try DocsPage("configuration.md").tableKeys()
        let undocumented = accepted.subtracting(documented).sorted()
        let unknown = documented.subtracting(accepted).sorted()
        #expect(undocumented.isEmpty, "accepted by the parser, missing from docs/configuration.md: \(undocumented)")
        #expect(unknown.isEmpty, "in docs/configuration.md, not accepted by the parser: \(unknown)")
    }

    @Test("the key log names list entries' keys with [] and sees a key added to any section")
    func keyLogFollowsTheParser() throws {
        let log = ConfigurationKeyLog()
        let document = Data(
            #"{"alerts": {"rules": [{"when": ["failure"]}, {"level": "active"}]}, "pushward": {}}"#.utf8)
        _ = try BridgeConfiguration(json: document, keyLog: log)
        #expect(log.keys.contains("alerts.rules[].when"))
        #expect(log.keys.contains("alerts.rules[].level"))
        #expect(log.keys.contains("pushward.url"))
        #expect(!log.keys.contains { $0.contains("[0]") || $0.contains("[1]") })
        // A key the parser does not read is refused, so it can never be documented by mistake.
        #expect(throws: ConfigurationError.self) {
            try BridgeConfiguration(
                json: Data(#"{"pushward": {"fidelty": "full"}}"#.utf8), keyLog: ConfigurationKeyLog())
        }
    }

    @Test("the table reader takes the first cell's code span, and only of table rows")
    func tableKeysReader() {
        let page = DocsPage(
            text: """
                | key | default | meaning |
                |---|---|---|
                | `a.b` | `1` | x |
                | `c[].d`| none | y |
                `e` is prose
                | not `f` | z |
                """)
        #expect(page.tableKeys() == ["a.b", "c[].d"])
    }
}
