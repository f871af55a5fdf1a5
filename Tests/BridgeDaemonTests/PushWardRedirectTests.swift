import BridgeCore
import Foundation
import PushWardClient
import Testing
import WebhookServer

/// The API key goes only where `pushward.url` points: a redirect is never followed (with or without
/// the `Authorization` header) and comes back as an answer whose reason says what to fix.
@Suite("PushWard client and redirects", .timeLimit(.minutes(1)))
struct PushWardRedirectTests {
    /// Records what reached a server.
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var requests: [HTTPRequest] = []
        func add(_ request: HTTPRequest) { lock.withLock { requests.append(request) } }
        var all: [HTTPRequest] { lock.withLock { requests } }
    }

    @Test(
        "a 301, 302, 307 or 308 from PushWard is not followed; the answer names the redirect",
        arguments: [301, 302, 307, 308])
    func redirectsAreRefused(status: Int) async throws {
        let elsewhere = Seen()
        let target = try HTTPServer(configuration: .init(listen: "127.0.0.1:0")) { request in
            elsewhere.add(request)
            return .json(200, ["ok": true])
        }
        defer { target.stop() }
        let redirected = Seen()
        let location = "http://127.0.0.1:\(target.port)/activities"
        let pushward = try HTTPServer(configuration: .init(listen: "127.0.0.1:0")) { request in
            redirected.add(request)
            var response = HTTPResponse.json(status, ["moved": true])
            response.headers.append(("Location", location))
            return response
        }
        defer { pushward.stop() }

        let client = PushWardClient(
            configuration: .init(
                baseURL: "http://127.0.0.1:\(pushward.port)", apiKey: "hlk_redirect-test-key", version: "test"))
        let answer = await client.send(
            PushWardRequest(method: .post, slug: "gh-redirect", body: ["slug": "gh-redirect", "name": "CI"]))
        guard case .noAnswer(let reason) = answer else {
            Issue.record("a \(status) became \(answer)")
            return
        }
        #expect(reason.contains("\(status)"))
        #expect(reason.contains("redirect"))
        #expect(reason.contains(location))
        #expect(redirected.all.count == 1)
        #expect(redirected.all.first?.header("authorization") == "Bearer hlk_redirect-test-key")
        #expect(elsewhere.all.isEmpty, "the redirect was followed")
    }
}
