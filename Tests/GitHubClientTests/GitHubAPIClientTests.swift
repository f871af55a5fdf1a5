import BridgeCore
import BridgeTestSupport
import COpenSSL
import Foundation
import GitHubClient
import Testing
import WebhookServer

/// The GitHub client against the fake GitHub API on loopback: App JWTs, installation tokens,
/// the delivery log's pages, ETags, the rate limit, and refusals said plainly.
@Suite("GitHub API client")
struct GitHubAPIClientTests {
    static let secret = "github-fake-secret-0123456789"
    static let hook = GitHubAPISettings.Hook.repository(owner: "acme", name: "widgets", id: 1)

    static func key(_ name: String) throws -> Data {
        try TestAssets.fixture("github-app/\(name).pem")
    }

    static func appKey() throws -> GitHubAppKey {
        try GitHubAppKey(pem: key("test-app.private-key"))
    }

    @Test("an App JWT verifies with the App's public key and names the App; another key's or a tampered one does not")
    func jwt() throws {
        let publicKey = try Self.key("test-app.public-key")
        let now = 1_800_000_000.0
        let jwt = try #require(try Self.appKey().jwt(appID: 123, at: now))
        #expect(FakeGitHubAPI.verifyJWT(jwt, appID: 123, publicKeyPEM: publicKey, now: now))
        #expect(!FakeGitHubAPI.verifyJWT(jwt, appID: 124, publicKeyPEM: publicKey, now: now))
        // Issued a minute back for clock drift, good for 10 minutes from then, no longer.
        #expect(FakeGitHubAPI.verifyJWT(jwt, appID: 123, publicKeyPEM: publicKey, now: now + 530))
        #expect(!FakeGitHubAPI.verifyJWT(jwt, appID: 123, publicKeyPEM: publicKey, now: now + 541))
        let other = try #require(
            try GitHubAppKey(pem: Self.key("other-app.private-key")).jwt(appID: 123, at: now))
        #expect(!FakeGitHubAPI.verifyJWT(other, appID: 123, publicKeyPEM: publicKey, now: now))
        var parts = jwt.split(separator: ".").map(String.init)
        parts[1] = GitHubAppKey.base64URL(Data(#"{"iat":1799999940,"exp":1800000540,"iss":"999"}"#.utf8))
        #expect(!FakeGitHubAPI.verifyJWT(parts.joined(separator: "."), appID: 999, publicKeyPEM: publicKey, now: now))
    }

    @Test("an encrypted key (PKCS#8 or PKCS#1 with Proc-Type) is refused with one clear line, no prompt")
    func encryptedKey() throws {
        for name in ["test-app.encrypted-pkcs8", "test-app.encrypted-pkcs1"] {
            do {
                _ = try GitHubAppKey(pem: Self.key(name))
                Issue.record("\(name) was accepted")
            } catch {
                #expect("\(error)".contains("encrypted with a passphrase"), "\(error)")
            }
        }
        // libcrypto itself is given a callback with no passphrase: it fails rather than ask.
        let pem = try Self.key("test-app.encrypted-pkcs8")
        let loaded = pem.withUnsafeBytes { pwb_private_key_load($0.baseAddress, $0.count) }
        #expect(loaded == nil)
    }

    @Test("a file that is not an RSA private key is refused with what to use instead")
    func badKey() throws {
        for pem in [Data("not a key".utf8), try Self.key("test-app.public-key"), Data()] {
            #expect(throws: GitHubAppKey.Problem.self) { try GitHubAppKey(pem: pem) }
        }
        do {
            _ = try GitHubAppKey(
                pem: Data("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n".utf8))
            Issue.record("a broken key was accepted")
        } catch {
            #expect(error.description.contains("BEGIN RSA PRIVATE KEY"))
        }
    }

    @Test("the delivery log is read newest first across its pages, each entry as GitHub logged it")
    func pages() async throws {
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .token("ghp_good"))
        for index in 0..<150 {
            await github.deliver(event: "workflow_job", body: Data(#"{"action":"queued","n":\#(index)}"#.utf8))
        }
        let client = GitHubAPIClient(baseURL: github.baseURL, credential: .token("ghp_good"), version: "test")
        var cursor: String?
        var seen: [HookDelivery] = []
        repeat {
            let page = try await client.deliveries(of: Self.hook, cursor: cursor)
            #expect(page.unreadable == 0)
            seen += page.deliveries
            cursor = page.nextCursor
        } while cursor != nil
        #expect(seen.count == 150)
        #expect(seen.map(\.id) == github.log.reversed().map(\.id))
        #expect(seen.map(\.guid) == github.log.reversed().map(\.guid))
        // Nothing listened: GitHub logs status 0, "could not connect".
        #expect(seen.allSatisfy { $0.statusCode == 0 && !$0.wasAccepted && $0.action == "queued" })
        #expect(github.requests.map(\.credential) == ["token", "token"])
    }

    @Test("a repeated GET sends the ETag and takes the 304, which GitHub does not count")
    func etags() async throws {
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .token("ghp_good"))
        await github.deliver(event: "workflow_run", body: Data(#"{"action":"completed"}"#.utf8))
        let observed = LineLog()
        let client = GitHubAPIClient(
            baseURL: github.baseURL, credential: .token("ghp_good"), version: "test",
            observer: { method, path, outcome in observed.append("\(method) \(path) \(outcome)") })
        let first = try await client.deliveries(of: Self.hook)
        let remaining = await client.rateLimit?.remaining
        let second = try await client.deliveries(of: Self.hook)
        #expect(first == second)
        #expect(await client.rateLimit?.remaining == remaining)
        #expect(
            observed.all == [
                "GET /repos/acme/widgets/hooks/1/deliveries ok",
                "GET /repos/acme/widgets/hooks/1/deliveries not_modified",
            ])
        #expect(github.requests.map(\.status) == [200, 304])
        // A new delivery changes the page: a full answer again.
        await github.deliver(event: "workflow_run", body: Data(#"{"action":"requested"}"#.utf8))
        #expect(try await client.deliveries(of: Self.hook).deliveries.count == 2)
    }

    @Test("the bodies kept for ETags stay within their budget, the oldest going first")
    func etagBudget() async throws {
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .token("ghp_good"))
        // Five runs whose answers are each 0.3 of the budget: the first two fall out.
        let filler = String(repeating: "x", count: GitHubAPIClient.etagBudget * 3 / 10)
        for id in 1...5 {
            github.setRun(
                repository: "acme/widgets", id: id, attempt: 1,
                run: ["id": .number(Double(id)), "filler": .string(filler)],
                jobs: ["total_count": 0, "jobs": []])
        }
        let client = GitHubAPIClient(baseURL: github.baseURL, credential: .token("ghp_good"), version: "test")
        for id in 1...5 { _ = try await client.run(repository: "acme/widgets", id: id, attempt: 1) }
        _ = try await client.run(repository: "acme/widgets", id: 5, attempt: 1)
        _ = try await client.run(repository: "acme/widgets", id: 1, attempt: 1)
        let statuses = github.requests.suffix(2).map(\.status)
        #expect(statuses == [304, 200], "the newest kept, the oldest asked for in full")
    }

    @Test("a spent rate limit stops calls until its reset, without sending them")
    func rateLimit() async throws {
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .token("ghp_good"))
        github.setRateLimit(remaining: 1, resetIn: 900)
        let client = GitHubAPIClient(baseURL: github.baseURL, credential: .token("ghp_good"), version: "test")
        _ = try await client.deliveries(of: Self.hook)
        #expect(await client.rateLimit?.remaining == 0)
        let reset = try #require(await client.rateLimit?.resetsAt)
        await #expect(throws: GitHubAPIClient.Failure.rateLimited(until: reset)) {
            _ = try await client.run(repository: "acme/widgets", id: 1, attempt: 1)
        }
        #expect(github.requests.count == 1, "the call was not sent")
        // A limit GitHub says is spent (another process used it) is read from the 403.
        github.setRateLimit(remaining: 0, resetIn: 600)
        let fresh = GitHubAPIClient(baseURL: github.baseURL, credential: .token("ghp_good"), version: "test")
        do {
            _ = try await fresh.deliveries(of: Self.hook)
            Issue.record("a 403 rate limit was taken as an answer")
        } catch {
            guard case .rateLimited(let until) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(until > Date().timeIntervalSince1970 + 500)
        }
    }

    @Test("a wrong token is said plainly, and never repeated in what is said")
    func wrongToken() async throws {
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .token("ghp_good"))
        let client = GitHubAPIClient(baseURL: github.baseURL, credential: .token("ghp_wrong_SECRET"), version: "test")
        do {
            _ = try await client.deliveries(of: Self.hook)
            Issue.record("a wrong token was accepted")
        } catch {
            #expect(error == .unauthorized("GET /repos/acme/widgets/hooks/1/deliveries: Bad credentials"))
            #expect(error.description.hasPrefix("GitHub refused the credential (401)"))
            #expect(!error.description.contains("SECRET"))
        }
    }

    @Test(
        "an App lists a repository hook with an installation token it trades its JWT for once, its own hook with the JWT"
    )
    func appCredentials() async throws {
        let publicKey = try Self.key("test-app.public-key")
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .app(id: 77, publicKeyPEM: publicKey))
        await github.deliver(event: "workflow_job", body: Data(#"{"action":"queued"}"#.utf8))
        let client = GitHubAPIClient(
            baseURL: github.baseURL, credential: .app(id: 77, key: try Self.appKey()), version: "test")
        #expect(try await client.deliveries(of: Self.hook).deliveries.count == 1)
        _ = try? await client.run(repository: "acme/widgets", id: 5, attempt: 1)
        #expect(
            github.requests.map { "\($0.method) \($0.path) \($0.credential)" } == [
                "GET /repos/acme/widgets/installation jwt", "POST /app/installations/42/access_tokens jwt",
                "GET /repos/acme/widgets/hooks/1/deliveries installation",
                "GET /repos/acme/widgets/actions/runs/5/attempts/1 installation",
            ])
        // The App's own hook: its JWT, no installation.
        let appHook = try FakeGitHubAPI(
            hookPath: "/app/hook", secret: Self.secret, credentials: .app(id: 77, publicKeyPEM: publicKey))
        await appHook.deliver(event: "workflow_run", body: Data(#"{"action":"completed"}"#.utf8))
        let appClient = GitHubAPIClient(
            baseURL: appHook.baseURL, credential: .app(id: 77, key: try Self.appKey()), version: "test")
        #expect(try await appClient.deliveries(of: .app).deliveries.count == 1)
        #expect(appHook.requests.map(\.credential) == ["jwt"])
        // Another App's key is refused.
        let stranger = GitHubAPIClient(
            baseURL: appHook.baseURL,
            credential: .app(id: 77, key: try GitHubAppKey(pem: Self.key("other-app.private-key"))), version: "test")
        await #expect(throws: GitHubAPIClient.Failure.self) { _ = try await stranger.deliveries(of: .app) }
    }

    @Test("a redelivery request makes GitHub send the same delivery again, signed, logged as a redelivery")
    func redelivery() async throws {
        let arrived = LineLog()
        let listener = try HTTPServer(configuration: HTTPServer.Configuration(listen: "127.0.0.1:0")) { request in
            arrived.append(
                "\(request.header("X-GitHub-Delivery") ?? "") "
                    + "\(WebhookSignature.check(body: request.body, header: request.header("X-Hub-Signature-256"), secrets: [Self.secret]) == .valid(secretIndex: 0))"
            )
            return HTTPResponse(status: 202)
        }
        defer { listener.stop() }
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .token("ghp_good"))
        await github.deliver(event: "workflow_job", body: Data(#"{"action":"queued"}"#.utf8), guid: "guid-1")
        #expect(github.log.first?.statusCode == 0)
        github.setWebhookURL("http://127.0.0.1:\(listener.port)/webhook")
        let client = GitHubAPIClient(baseURL: github.baseURL, credential: .token("ghp_good"), version: "test")
        let id = try #require(github.log.first?.id)
        try await client.redeliver(id, of: Self.hook)
        for _ in 0..<200 where github.log.count < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(arrived.all == ["guid-1 true"])
        #expect(github.log.last?.redelivery == true && github.log.last?.guid == "guid-1")
        #expect(github.log.last?.statusCode == 202)
        await #expect(throws: GitHubAPIClient.Failure.self) { try await client.redeliver(1, of: Self.hook) }
    }
}
