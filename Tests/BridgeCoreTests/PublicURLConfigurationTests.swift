import Foundation
import Testing

@testable import BridgeCore

/// `public_url` (top level, shared by `github hooks`, recovery and `actions`), its older spelling
/// `actions.public_url`, and `log_format`.
@Suite("public_url and log_format")
struct PublicURLConfigurationTests {
    static let api = #""github": {"api": {"token": "ghp_x"}}"#

    static func parse(_ body: String) throws(ConfigurationError) -> BridgeConfiguration {
        try BridgeConfiguration(json: Data("{\(body)}".utf8))
    }

    static func error(_ body: String) -> ConfigurationError? {
        do throws(ConfigurationError) {
            _ = try parse(body)
            return nil
        } catch {
            return error
        }
    }

    @Test("the top-level public_url is the address of hooks and buttons alike, without a trailing slash")
    func topLevel() throws {
        let configuration = try Self.parse(
            #""public_url": "https://hooks.example.com/", \#(Self.api), "actions": {}"#)
        #expect(configuration.publicURL == "https://hooks.example.com")
        #expect(configuration.actions?.publicURL == "https://hooks.example.com")
        #expect(try Self.parse(#""public_url": "https://hooks.example.com""#).actions == nil)
    }

    @Test("actions.public_url alone still works and is the public URL too")
    func olderSpelling() throws {
        let configuration = try Self.parse(#"\#(Self.api), "actions": {"public_url": "https://b.example.com"}"#)
        #expect(configuration.publicURL == "https://b.example.com")
        #expect(configuration.actions?.publicURL == "https://b.example.com")
    }

    @Test("both: the same address is fine, two different ones are refused naming both")
    func contradiction() throws {
        let same = try Self.parse(
            #""public_url": "https://a.example.com", \#(Self.api), "actions": {"public_url": "https://a.example.com/"}"#
        )
        #expect(same.publicURL == "https://a.example.com")
        let error = try #require(
            Self.error(
                #""public_url": "https://a.example.com", \#(Self.api), "actions": {"public_url": "https://b.example.com"}"#
            ))
        #expect(error.key == "actions.public_url")
        #expect(error.problem.contains("https://a.example.com") && error.problem.contains("https://b.example.com"))
    }

    @Test("actions without any public_url is refused; a bad public_url is refused at the top level too")
    func refusals() throws {
        #expect(Self.error(#"\#(Self.api), "actions": {}"#)?.key == "actions.public_url")
        #expect(Self.error(#""public_url": "http://hooks.example.com""#)?.key == "public_url")
        #expect(Self.error(#""public_url": "https://hooks.example.com/?a=1""#)?.key == "public_url")
        #expect(Self.error(#""public_url": """#)?.key == "public_url")
        #expect(Self.error(#""public_url": 3"#)?.key == "public_url")
    }

    @Test("log_format is text, json or unset; anything else is refused naming the key")
    func logFormat() throws {
        #expect(try Self.parse("").logFormat == nil)
        #expect(try Self.parse(#""log_format": "text""#).logFormat == "text")
        #expect(try Self.parse(#""log_format": "json""#).logFormat == "json")
        #expect(Self.error(#""log_format": "pretty""#)?.key == "log_format")
        #expect(Self.error(#""log_format": true"#)?.key == "log_format")
    }
}
