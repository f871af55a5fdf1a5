import Foundation
import Testing

@testable import BridgeCore

@Suite("GitHubTimestamp")
struct GitHubTimestampTests {
    /// Expected values computed independently (Python `datetime.fromisoformat(...).timestamp()`).
    @Test(arguments: [
        ("2023-10-13T10:11:52Z", 1_697_191_912.0),
        ("2023-10-13T10:11:33.000Z", 1_697_191_893.0),
        ("2023-10-13T09:30:43Z", 1_697_189_443.0),
        ("2022-10-06T18:21:21.000-07:00", 1_665_105_681.0),
        ("2024-02-29T12:00:00+05:30", 1_709_188_200.0),
        ("2000-02-29T00:00:00Z", 951_782_400.0),
        ("1970-01-01T00:00:00Z", 0.0),
        ("1969-12-31T23:59:59Z", -1.0),
        ("1900-03-01T00:00:00Z", -2_203_891_200.0),
        ("9999-12-31T23:59:59Z", 253_402_300_799.0),
        ("2023-10-13t10:11:52z", 1_697_191_912.0),
    ])
    func parsesKnownInstants(text: String, expected: Double) {
        #expect(GitHubTimestamp.parse(text) == expected)
    }

    @Test func keepsFractionalSeconds() {
        #expect(GitHubTimestamp.parse("2023-10-13T10:11:52.250Z") == 1_697_191_912.25)
        #expect(GitHubTimestamp.parse("2023-10-13T10:11:52.5+00:00") == 1_697_191_912.5)
        let nanos = GitHubTimestamp.parse("2023-10-13T10:11:52.123456789123Z")
        #expect(abs((nanos ?? 0) - 1_697_191_912.123456789) < 1e-6)
    }

    @Test func offsetsNameTheSameInstant() {
        let pacific = GitHubTimestamp.parse("2022-10-06T18:21:21.000-07:00")
        #expect(pacific != nil)
        #expect(pacific == GitHubTimestamp.parse("2022-10-07T01:21:21Z"))
        #expect(GitHubTimestamp.parse("2023-10-13T10:11:52+00:00") == GitHubTimestamp.parse("2023-10-13T10:11:52Z"))
        #expect(GitHubTimestamp.parse("2023-10-13T10:11:52-00:00") == GitHubTimestamp.parse("2023-10-13T10:11:52Z"))
    }

    @Test(arguments: [
        "", "2023-10-13", "2023-10-13T10:11:52", "2023-10-13 10:11:52Z", "2023-10-13T10:11Z",
        "2023-13-01T00:00:00Z", "2023-00-01T00:00:00Z", "2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z",
        "2023-04-31T00:00:00Z", "2023-10-00T00:00:00Z", "2023-10-13T24:00:00Z", "2023-10-13T10:60:00Z",
        "2023-10-13T10:11:61Z", "2023-10-13T10:11:52.Z", "2023-10-13T10:11:52ZZ", "2023-10-13T10:11:52Z ",
        " 2023-10-13T10:11:52Z", "2023-10-13T10:11:52+0700", "2023-10-13T10:11:52+07", "2023-10-13T10:11:52+24:00",
        "2023-10-13T10:11:52+07:60", "2023-1-13T10:11:52Z", "20231013T101152Z", "2023-10-13T10:11:5xZ",
        "２０２３-10-13T10:11:52Z", "-023-10-13T10:11:52Z", "yesterday",
    ])
    func rejectsMalformed(text: String) {
        #expect(GitHubTimestamp.parse(text) == nil)
    }

    @Test func leapYearsFollowTheGregorianRule() {
        #expect(GitHubTimestamp.parse("2000-02-29T00:00:00Z") != nil)
        #expect(GitHubTimestamp.parse("2024-02-29T00:00:00Z") != nil)
        #expect(GitHubTimestamp.parse("2100-02-29T00:00:00Z") == nil)
        #expect(GitHubTimestamp.parse("2023-02-29T00:00:00Z") == nil)
    }

    /// Every calendar day from 1600 to 2400 is exactly one day after the previous one, and the
    /// epoch is day 0: this pins `daysFromCivil` without trusting any other date library.
    @Test func daysFromCivilCountsEveryDay() {
        var expected = GitHubTimestamp.daysFromCivil(year: 1600, month: 1, day: 1)
        var mismatches = 0
        for year in 1600...2400 {
            for month in 1...12 {
                for day in 1...GitHubTimestamp.daysInMonth(year: year, month: month) {
                    if GitHubTimestamp.daysFromCivil(year: year, month: month, day: day) != expected {
                        mismatches += 1
                    }
                    expected += 1
                }
            }
        }
        #expect(mismatches == 0)
        #expect(GitHubTimestamp.daysFromCivil(year: 1970, month: 1, day: 1) == 0)
        #expect(GitHubTimestamp.daysFromCivil(year: 2000, month: 3, day: 1) == 11_017)
    }

    /// Every timestamp string in the recorded payloads parses, to the same instant Foundation's
    /// ISO 8601 parser finds (used here only as an oracle; the core never uses it).
    @Test func agreesWithFoundationOnEveryFixtureTimestamp() throws {
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var checked = 0
        for name in try Fixtures.names() {
            let text = String(decoding: try Fixtures.data(name), as: UTF8.self)
            for candidate in text.split(separator: "\"") where Self.looksLikeTimestamp(candidate) {
                let string = String(candidate)
                let oracle = try #require(plain.date(from: string) ?? fractional.date(from: string), "\(string)")
                #expect(GitHubTimestamp.parse(string) == oracle.timeIntervalSince1970, "\(name): \(string)")
                checked += 1
            }
        }
        #expect(checked > 300)
    }

    private static func looksLikeTimestamp(_ text: Substring) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40, bytes[10] == UInt8(ascii: "T") else { return false }
        return bytes[0..<4].allSatisfy { $0 >= 0x30 && $0 <= 0x39 } && bytes[4] == UInt8(ascii: "-")
    }
}
