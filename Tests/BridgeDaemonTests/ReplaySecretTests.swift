import BridgeCore
import BridgeTestSupport
import Foundation
import Testing
import WebhookServer

/// `replay` takes its secret from a file or from `PUSHWARD_WEBHOOK_SECRETS` (the variable `serve`
/// reads), so it need not appear in the process list; `--secret` still works and says it shows
/// there.
@Suite("replay's secret", .serialized, .timeLimit(.minutes(1)))
struct ReplaySecretTests {
    static let secret = "replay-secret-0123456789abcdef"

    /// A receiver that answers 202 to a body signed with `secret`, 401 otherwise.
    final class Receiver: @unchecked Sendable {
        let server: HTTPServer
        init() throws {
            server = try HTTPServer(configuration: HTTPServer.Configuration(listen: "127.0.0.1:0")) { request in
                let signature = request.header("x-hub-signature-256") ?? ""
                let good = signature == WebhookSignature.sign(body: request.body, secret: ReplaySecretTests.secret)
                return .json(good ? 202 : 401, ["status": good ? "queued" : "bad signature"])
            }
        }
        var url: String { "http://127.0.0.1:\(server.port)/webhook" }
    }

    @Test("--secret-file, PUSHWARD_WEBHOOK_SECRETS(_FILE) and --secret each sign; only --secret warns")
    func secretSources() async throws {
        let directory = try ScratchDirectory()
        let receiver = try Receiver()
        let file = try directory.write("secret.txt", Self.secret + "\nanother-secret-line\n")
        let recording = TestAssets.fixtures.appendingPathComponent("workflow_job.queued.attempt10-pre-commit.json").path
        let base = ["replay", recording, "--url", receiver.url]
        let cases: [(String, [String], [String: String], Bool)] = [
            ("--secret-file", ["--secret-file", file], [:], false),
            ("PUSHWARD_WEBHOOK_SECRETS", [], ["PUSHWARD_WEBHOOK_SECRETS": Self.secret + "\nold-secret"], false),
            ("PUSHWARD_WEBHOOK_SECRETS_FILE", [], ["PUSHWARD_WEBHOOK_SECRETS_FILE": file], false),
            ("--secret", ["--secret", Self.secret], [:], true),
        ]
        for (name, options, environment, warns) in cases {
            let result = try await BridgeProcess.run(base + options, environment: environment, in: directory)
            #expect(result.status == 0, "\(name): \(result.stdout) \(result.stderr)")
            #expect(result.stdout.hasPrefix("202"), "\(name): \(result.stdout)")
            #expect(result.stderr.contains("process list") == warns, "\(name): \(result.stderr)")
        }
        let none = try await BridgeProcess.run(base, in: directory)
        #expect(none.status == 64, "no secret anywhere is a usage error: \(none.stderr)")
        #expect(none.stderr.contains("--secret-file"))
        let unreadable = try await BridgeProcess.run(
            base + ["--secret-file", directory.path("missing")], in: directory)
        #expect(unreadable.status == 78 && unreadable.stderr.contains("cannot be read"), "\(unreadable.stderr)")
        _ = receiver
    }
}
