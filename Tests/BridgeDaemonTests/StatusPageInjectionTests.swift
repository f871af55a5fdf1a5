import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// The status page with every payload-sourced field (job, workflow and repository names, branch,
/// `head_sha`, run, repository and pull request URLs, the delivery's action, and the commit
/// message, actor and sender kept with the payload) set to strings built to break out of HTML,
/// SVG attributes and URLs, delivered to a real daemon as signed webhooks. The page's bytes are
/// then tokenised: each tag must be one the page draws, every attribute must close where it
/// should, no event handler, every link http(s) or the page's own.
@Suite("Status page against hostile payloads", .serialized, .timeLimit(.minutes(3)))
struct StatusPageInjectionTests {
    static func report(_ scanner: MarkupScanner, _ what: String) {
        #expect(scanner.problems.isEmpty, "\(what): \(scanner.problems.prefix(12).joined(separator: "\n"))")
    }

    @Test("no payload string becomes markup, an event handler or a non-http link on the page")
    func hostilePage() async throws {
        let admin = try await AdminAPITests.Admin.start()
        do {
            try await HostileInput.fill(admin)

            // `/` as served: the twenty most recent runs, which are all of them.
            let served = try await admin.get("/")
            #expect(served.status == 200)
            let page = served.text
            Self.report(MarkupScanner(page), "GET /")
            for index in HostileInput.strings.indices {
                #expect(
                    page.contains(HostileInput.marker(index)),
                    "\(HostileInput.strings[index].label) never reached the page")
                // The fork's name is shown beside the branch its author chose.
                #expect(
                    page.contains("<dt>From</dt><dd><code>\(HostileInput.marker(index))-fork/"),
                    "the fork of \(HostileInput.strings[index].label) is not named on the page")
            }

            // The same through the snapshot and the renderer, with every run and its cards.
            let snapshot = try await admin.read {
                try StatusSnapshot.read(from: $0, limit: 100, at: Date().timeIntervalSince1970)
            }
            #expect(snapshot.runs.count == 2 * HostileInput.strings.count)
            let rendered = MarkupScanner(StatusPage.render(snapshot))
            Self.report(rendered, "StatusPage.render")
            for run in snapshot.runs {
                for card in [run.shown, run.desired].compactMap({ $0 }) {
                    Self.report(MarkupScanner(CardSVG.render(card.layout)), "card of \(run.key.runID)")
                }
            }

            // The finished runs' commit links: GitHub's URL with the hostile `head_sha` as one
            // percent-encoded path segment.
            for index in HostileInput.strings.indices {
                let prefix = "https://github.com/\(HostileInput.marker(index))-a/repo/commit/"
                let commits = rendered.links.filter { $0.hasPrefix(prefix) }
                #expect(!commits.isEmpty, "no commit link for \(HostileInput.strings[index].label)")
                for link in commits {
                    let segment = link.dropFirst(prefix.count)
                    let unreserved = segment.utf8.allSatisfy { byte in
                        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
                            || (byte >= 0x61 && byte <= 0x7A)
                            || Array("-._~%".utf8).contains(byte)
                    }
                    #expect(unreserved, "commit link \(link.debugDescription)")
                    #expect(segment.removingPercentEncoding == HostileInput.strings[index].text)
                }
            }
            try await admin.stop()
        } catch {
            try? await admin.stop()
            throw error
        }
    }

    @Test("Chromium's DOM of the page has no element or attribute the page did not write")
    func hostilePageInChromium() async throws {
        guard FileManager.default.isExecutableFile(atPath: StatusPageBrowserTests.chromium) else {
            Issue.record("\(StatusPageBrowserTests.chromium) is missing: `make test-deps` installs it")
            return
        }
        let admin = try await AdminAPITests.Admin.start()
        do {
            try await HostileInput.fill(admin)
            let directory = try ScratchDirectory()
            let dump = try await StatusPageBrowserTests.chromium(
                ["--dump-dom", "http://127.0.0.1:\(admin.daemon.adminPort)/"], in: directory)
            #expect(dump.status == 0, "chromium --dump-dom failed: \(dump.stderr)")
            let dom = dump.stdout
            #expect(dom.contains("<section id=\"active\">"), "not the status page: \(dom.prefix(500))")
            Self.report(MarkupScanner(dom, serialized: true), "Chromium's DOM")
            for index in HostileInput.strings.indices {
                #expect(
                    dom.contains(HostileInput.marker(index)), "\(HostileInput.strings[index].label) is not in the DOM")
            }
            try await admin.stop()
        } catch {
            try? await admin.stop()
            throw error
        }
    }
}
