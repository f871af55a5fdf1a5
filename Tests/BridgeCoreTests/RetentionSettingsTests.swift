import Foundation
import Testing

@testable import BridgeCore

/// The `retention` section: defaults, parsing, and the errors that name the key.
@Suite("Configuration: retention")
struct RetentionSettingsTests {
    private func parse(_ json: String) throws(ConfigurationError) -> BridgeConfiguration {
        try BridgeConfiguration(json: Data(json.utf8))
    }

    private func error(_ json: String) -> ConfigurationError? {
        do throws(ConfigurationError) {
            _ = try parse(json)
            return nil
        } catch {
            return error
        }
    }

    @Test("without a retention section every table gets its default")
    func defaults() throws {
        let configuration = try parse("{}")
        #expect(configuration.retention.deliveries == 30 * 86_400)
        #expect(configuration.retention.runs == 45 * 86_400)
        #expect(configuration.retention.activities == 30 * 86_400)
        #expect(configuration.retention.stepHistory == 30 * 86_400)
        #expect(configuration.retention == RetentionSettings())
        // The defaults pass their own checks.
        #expect(configuration.retention.runs >= RetentionSettings.minimumRuns)
        #expect(configuration.retention.deliveries >= configuration.payloadRetention)
    }

    @Test("every key is read, in days or seconds")
    func everyKey() throws {
        let configuration = try parse(
            #"""
            {"retention": {"_comment": "c", "deliveries": "14d", "runs": "90d", "activities": "2d",
                           "step_history": 172800}}
            """#)
        #expect(configuration.retention.deliveries == 14 * 86_400)
        #expect(configuration.retention.runs == 90 * 86_400)
        #expect(configuration.retention.activities == 2 * 86_400)
        #expect(configuration.retention.stepHistory == 2 * 86_400)
    }

    @Test("unset, the delivery retention follows a longer payload retention; set shorter, it is refused")
    func deliveriesAgainstPayloads() throws {
        #expect(try parse(#"{"github": {"payload_retention": "60d"}}"#).retention.deliveries == 60 * 86_400)
        #expect(
            try parse(#"{"github": {"payload_retention": "60d"}, "retention": {"runs": "90d"}}"#).retention.deliveries
                == 60 * 86_400)
        #expect(try parse(#"{"github": {"payload_retention": "1d"}}"#).retention.deliveries == 30 * 86_400)
        let shorter = try #require(
            error(#"{"github": {"payload_retention": "7d"}, "retention": {"deliveries": "5d"}}"#))
        #expect(shorter.key == "retention.deliveries")
        #expect(shorter.problem.contains("5d"))
        #expect(shorter.problem.contains("github.payload_retention (7d)"))
        #expect(
            try parse(#"{"github": {"payload_retention": "7d"}, "retention": {"deliveries": "7d"}}"#)
                .retention.deliveries == 7 * 86_400)
    }

    @Test(
        "a bad value names its key",
        arguments: [
            (#"{"retention": {"runs": "31d"}}"#, "retention.runs"),
            (#"{"retention": {"runs": "30m"}}"#, "retention.runs"),
            (#"{"retention": {"deliveries": "23h"}}"#, "retention.deliveries"),
            (#"{"retention": {"activities": "0"}}"#, "retention.activities"),
            (#"{"retention": {"step_history": "3651d"}}"#, "retention.step_history"),
            (#"{"retention": {"step_history": "a month"}}"#, "retention.step_history"),
            (#"{"retention": {"pushes": "30d"}}"#, "retention.pushes"),
            (#"{"retention": "30d"}"#, "retention"),
        ])
    func badValue(json: String, key: String) throws {
        let problem = try #require(error(json), "\(json) should be refused")
        #expect(problem.key == key)
        #expect(problem.description.hasPrefix("\(key): "))
    }

    @Test("the limits are inclusive, and the runs minimum says why")
    func limits() throws {
        let edges = try parse(
            #"{"retention": {"runs": "32d", "deliveries": "3650d", "activities": "1d", "step_history": "1d"}}"#)
        #expect(edges.retention.runs == RetentionSettings.minimumRuns)
        #expect(edges.retention.deliveries == RetentionSettings.maximum)
        #expect(edges.retention.activities == RetentionSettings.minimumOther)
        let runs = try #require(error(#"{"retention": {"runs": "31d23h"}}"#))
        #expect(runs.problem.contains("at least 32d"))
        #expect(runs.problem.contains("month chart"))
    }

    @Test("durations are written back as configuration writes them")
    func durationText() {
        #expect(DurationText.text(45 * 86_400) == "45d")
        #expect(DurationText.text(86_400 + 12 * 3_600) == "1d12h")
        #expect(DurationText.text(90) == "1m30s")
        #expect(DurationText.text(0) == "0s")
        for seconds in [1, 59, 3_600, 86_399, 2_764_800, 315_360_000] {
            #expect(DurationText.seconds(DurationText.text(seconds)) == seconds)
        }
    }
}
