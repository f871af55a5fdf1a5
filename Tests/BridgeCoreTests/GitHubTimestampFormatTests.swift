import Testing

@testable import BridgeCore

@Suite("GitHub timestamp formatting")
struct GitHubTimestampFormatTests {
    @Test("formats as GitHub writes, and parses back", arguments: [0.0, 1_697_191_887, 951_782_400, 4_102_444_799])
    func roundTrip(time: Double) throws {
        let text = GitHubTimestamp.format(time)
        #expect(text.count == 20)
        #expect(try #require(GitHubTimestamp.parse(text)) == time)
    }

    @Test("known values, milliseconds, and times before 1970")
    func knownValues() {
        #expect(GitHubTimestamp.format(1_697_191_887) == "2023-10-13T10:11:27Z")
        #expect(GitHubTimestamp.format(951_782_400) == "2000-02-29T00:00:00Z")
        #expect(GitHubTimestamp.format(1_697_191_887.25, milliseconds: true) == "2023-10-13T10:11:27.250Z")
        #expect(GitHubTimestamp.format(-1) == "1969-12-31T23:59:59Z")
    }
}
