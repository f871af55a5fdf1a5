import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeDaemon

/// The capability a button carries: its shape, its randomness, the path check that spares a
/// lookup, and the comparison of its secret.
@Suite("action token")
struct ActionTokenTests {
    @Test("44 base64url characters: a 12-character selector and a 32-character secret, fresh each time")
    func shape() {
        let tokens = (0..<200).map { _ in ActionToken.mint() }
        for token in tokens {
            #expect(token.text.utf8.count == 44)
            #expect(token.selector.count == 12)
            #expect(token.verifier.count == 32)
            #expect(ActionToken(path: Substring(token.text)) == token, "a minted token reads back from its path")
        }
        #expect(Set(tokens.map(\.text)).count == tokens.count)
        #expect(Set(tokens.map(\.selector)).count == tokens.count)
    }

    @Test("a path segment that cannot be a token is refused before any lookup")
    func path() {
        let good = String(String(repeating: "aZ0-_", count: 9).prefix(44))
        #expect(ActionToken(path: Substring(good)) != nil)
        let short = String(good.dropLast())
        let bads: [String] = [
            "", short, good + "a", short + "=", short + "/", String(good.dropLast(2)) + "é", short + "\u{0}",
            String(good.dropLast(4)) + "👩", short + "%",
        ]
        for bad in bads {
            #expect(ActionToken(path: Substring(bad)) == nil, "\(bad.debugDescription)")
        }
    }

    @Test("the secret is stored as its SHA-256: another secret under the same selector has another digest")
    func digest() {
        let token = ActionToken.mint()
        #expect(token.verifierHash.count == 32)
        #expect(token.verifierHash == Data(SHA256.digest(Array(token.verifier.utf8))))
        #expect(token.verifierHash != Data(token.verifier.utf8), "the secret itself is not its hash")
        let sibling = ActionToken(selector: token.selector, verifier: ActionToken.mint().verifier)
        #expect(sibling.verifierHash != token.verifierHash, "the same selector with another secret is a forgery")
    }
}

/// A press recorded but cut off by a stop before GitHub answered: at the next start it becomes
/// `interrupted`, said once, and is never asked of GitHub again.
@Suite("cut-off presses")
struct CutOffPressTests {
    @Test("the start marks presses still requested as interrupted and says so; finished ones stay")
    func interrupted() async throws {
        let directory = try ScratchDirectory()
        let database = try BridgeDatabase(path: directory.path("bridge.sqlite"))
        let run = RunKey(repository: "acme/widgets", runID: 1, attempt: 1)
        let binding = ActionBinding(
            kind: .cancel, run: run, environment: nil, recipient: nil, surface: "card gh-1", createdAt: 10,
            expiresAt: 3_610)
        let cut = try database.write {
            try $0.insertAction(binding, person: "octocat", state: .requested, detail: nil, at: 20)
        }
        let done = try database.write {
            try $0.insertAction(binding, person: "octocat", state: .requested, detail: nil, at: 21)
        }
        try database.write { try $0.finishAction(done, state: .done, status: 202, detail: nil, at: 22) }
        let logs = LineLog()
        let logger = Logger(label: "test", sink: { logs.append($0) })
        // The service marks them, on a connection of its own, as it does when the store starts.
        let service = BridgeService(
            database: try BridgeDatabase(path: directory.path("bridge.sqlite")), engine: BridgeEngine(),
            configuration: BridgeConfiguration(), logger: logger)
        await ActionPresses.interruptCutOffPresses(in: service, recordedBy: nil, logger: logger, at: 100)
        let rows = try database.actions(repository: "acme/widgets", runID: 1)
        #expect(rows.first { $0.id == cut }?.state == .interrupted)
        #expect(rows.first { $0.id == cut }?.detail?.contains("not asked again") == true)
        #expect(rows.first { $0.id == done }?.state == .done)
        #expect(logs.all.filter { $0.contains("cut off by a stop") }.count == 1)
        await ActionPresses.interruptCutOffPresses(in: service, recordedBy: nil, logger: logger, at: 200)
        #expect(logs.all.filter { $0.contains("cut off by a stop") }.count == 1, "said once")
    }
}
