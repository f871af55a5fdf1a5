import Foundation
import Testing

@testable import BridgeCore

/// `pushward.requests_per_minute`, `pushward.rate_window` and the widget count: what keeps the
/// bridge inside PushWard's per-minute limit and its 50 widgets, refused with the key named when
/// it could not.
@Suite("Pacing configuration")
struct PacingConfigurationTests {
    static func error(_ json: String) -> ConfigurationError? {
        do throws(ConfigurationError) {
            _ = try BridgeConfiguration(json: Data(json.utf8))
            return nil
        } catch {
            return error
        }
    }

    @Test("by default 120 requests a minute: PushWard's 200 less room for the key's other clients")
    func defaults() throws {
        let configuration = try BridgeConfiguration(json: Data("{}".utf8))
        #expect(configuration.pacing.limit == RequestPacer.Settings.defaultLimit)
        #expect(configuration.pacing.window == 60)
        #expect(configuration.pacing.limit < RequestPacer.Settings.pushwardLimit)
    }

    @Test("a limit PushWard would refuse, or none at all, is an error naming the key and the 200")
    func refusedLimits() throws {
        for value in ["0", "201", "-5", "\"fast\"", "12.5"] {
            let error = try #require(Self.error(#"{"pushward": {"requests_per_minute": \#(value)}}"#), "\(value)")
            #expect(error.key == "pushward.requests_per_minute")
            #expect(error.problem.contains("200"), "\(error.problem)")
        }
        let window = try #require(Self.error(#"{"pushward": {"rate_window": "0s"}}"#))
        #expect(window.key == "pushward.rate_window")
        let accepted = try BridgeConfiguration(
            json: Data(#"{"pushward": {"requests_per_minute": 200, "rate_window": "6s"}}"#.utf8))
        #expect(accepted.pacing == RequestPacer.Settings(limit: 200, window: 6))
    }

    @Test("more than 50 widgets is refused: PushWard would never create the rest")
    func widgetLimit() throws {
        func widgets(_ count: Int) -> String {
            let entries = (0..<count).map { #"{"slug": "w\#($0)", "name": "Widget \#($0)"}"# }
            return #"{"widgets": [\#(entries.joined(separator: ", "))]}"#
        }
        let fifty = try BridgeConfiguration(json: Data(widgets(50).utf8))
        #expect(fifty.widgets.count == 50)
        let error = try #require(Self.error(widgets(51)))
        #expect(error.key == "widgets")
        #expect(error.problem.contains("51") && error.problem.contains("50"), "\(error.problem)")
    }
}
