import Testing

@testable import BridgeDaemon

/// The status page's recovery section with what GitHub (or whatever answers at `github.api.url`)
/// put in an error message: escaped, as every other string on the page.
@Suite("Recovery on the status page")
struct RecoveryStatusPageTests {
    @Test("a hostile message in the recovery problem is shown as text, not markup")
    func hostileProblem() {
        var standing = RecoveryBoard.Standing()
        standing.lastSweepAt = 1_800_000_000
        standing.redeliveriesRequested = 3
        standing.rateLimitRemaining = 4_990
        standing.rateLimitLimit = 5_000
        standing.problem = "GitHub refused the request (403): <img src=x onerror=alert(1)> \u{202E}dlrow"
        let html = StatusPage.recoverySection(standing)
        #expect(!html.contains("<img"))
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"))
        #expect(!html.unicodeScalars.contains("\u{202E}"), "a bidi override does not reach the page as it is")
        #expect(html.contains("4990 of 5000 requests left this hour"))
        #expect(html.contains("<span id=\"redeliveries\">3</span>"))
    }
}
