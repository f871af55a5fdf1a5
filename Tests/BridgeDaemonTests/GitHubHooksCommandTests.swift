import BridgeCore
import BridgeDaemon
import BridgeTestSupport
import Foundation
import Testing
import WebhookServer

/// `pushward-bridge github hooks` through the real binary against the fake GitHub, which keeps
/// hooks as GitHub does: each branch (create, fix, nothing to do, --check, refusals, Enterprise
/// Server, pagination, a GitHub App) and what it writes, or does not.
@Suite("github hooks", .serialized, .timeLimit(.minutes(3)))
struct GitHubHooksCommandTests {
    static let secret = "hooks-secret-0123456789"
    static let older = "older-secret-0123456789"
    static let token = "ghp_hooks_test_token"
    static let publicURL = "https://hooks.example.com"
    static let hookURL = publicURL + "/webhook"
    static let repository = "/repos/acme/widgets"

    /// A scratch directory with a configuration pointing at `github` (its API under `prefix`).
    struct Setup {
        var directory: ScratchDirectory
        var github: FakeGitHubAPI
        var config: String

        func run(_ arguments: [String]) async throws -> BridgeProcess.Result {
            try await BridgeProcess.run(["github", "hooks", "--config", config] + arguments, in: directory)
        }

        var hooks: [FakeHookStore.Hook] { github.hookStore.hooks(of: GitHubHooksCommandTests.repository) }
        var writes: Int { github.hookStore.writes.count }
    }

    static func setup(
        github: FakeGitHubAPI? = nil, prefix: String = "", credential: String = #""token": "\#(token)""#,
        publicURL: String? = publicURL, withAPI: Bool = true
    ) throws -> Setup {
        let github = try github ?? FakeGitHubAPI(secret: secret, credentials: .token(token))
        let directory = try ScratchDirectory()
        let api = withAPI ? #", "api": {"url": "\#(github.baseURL + prefix)", \#(credential)}"# : ""
        let config = try directory.write(
            "config.json",
            """
            {\(publicURL.map { #""public_url": "\#($0)","# } ?? "") "database": "\(directory.path("bridge.sqlite"))",
             "github": {"webhook_secrets": ["\(secret)", "\(older)"]\(api)}}
            """)
        return Setup(directory: directory, github: github, config: config)
    }

    /// No backtrace, no crash: what a refusal must never show.
    static func expectClean(_ result: BridgeProcess.Result) {
        #expect(result.reason == .exit)
        #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Stack dump"))
    }

    @Test("no hook on the URL: one is created as the bridge needs it; a second run writes nothing and says so")
    func createsThenNothing() async throws {
        let setup = try Self.setup()
        setup.github.hookStore.add(owner: Self.repository, events: ["push"], url: "https://ci.example.com/hook")
        let created = try await setup.run(["--repo", "acme/widgets"])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.contains("repos/acme/widgets: created hook"))
        let hook = try #require(setup.hooks.first { $0.url == Self.hookURL })
        #expect(hook.active && hook.name == "web")
        #expect(hook.events == ["workflow_job", "workflow_run"])
        #expect(hook.contentType == "json" && hook.insecureSSL == "0")
        #expect(hook.secret == Self.secret, "the first of webhook_secrets")
        #expect(setup.hooks.count == 2, "the other hook is left alone")
        #expect(setup.writes == 1)

        let again = try await setup.run(["--repo", "acme/widgets"])
        #expect(again.status == 0)
        #expect(again.stdout.contains("is right; nothing written"))
        #expect(setup.writes == 1, "a second run makes no write")
        let json = try #require(try await setup.run(["--repo", "acme/widgets", "--json"]).json)
        #expect(json["result"] == "unchanged")
        #expect(json["ok"] == true)
        #expect(json["hook"]?["secret_set"] == true)
        #expect(setup.writes == 1)
        #expect(!again.stdout.contains(Self.secret) && !json.canonicalString.contains(Self.secret))
    }

    @Test("an inactive hook is activated and nothing else is sent: its secret and other events stay as they were")
    func fixesOnlyWhatIsWrong() async throws {
        let setup = try Self.setup()
        let id = setup.github.hookStore.add(
            owner: Self.repository, active: false, events: ["push", "workflow_job", "workflow_run"], url: Self.hookURL,
            secret: Self.older)
        let result = try await setup.run(["--repo", "acme/widgets"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("fixed hook \(id)"))
        #expect(result.stdout.contains("inactive"))
        let write = try #require(setup.github.hookStore.writes.last)
        #expect(write.method == "PATCH" && write.path == "\(Self.repository)/hooks/\(id)")
        #expect(write.body == ["active": true])
        let hook = try #require(setup.hooks.first)
        #expect(hook.active && hook.secret == Self.older)
        #expect(hook.events == ["push", "workflow_job", "workflow_run"])
    }

    @Test("a missing event, a form and skipped TLS checks are fixed in one PATCH that sends the secret again")
    func fixesConfigAndEvents() async throws {
        let setup = try Self.setup()
        setup.github.hookStore.add(
            owner: Self.repository, events: ["push", "workflow_job"], url: Self.hookURL, contentType: "form",
            insecureSSL: "1", secret: Self.older)
        let json = try #require(try await setup.run(["--repo", "acme/widgets", "--json"]).json)
        #expect(json["result"] == "updated")
        #expect(json["ok"] == true)
        #expect(
            json["problems"]?.arrayValue?.compactMap { $0["code"]?.stringValue } == [
                "missing_event:workflow_run", "form_content_type", "insecure_ssl",
            ])
        let hook = try #require(setup.hooks.first)
        #expect(hook.events == ["push", "workflow_job", "workflow_run"], "the hook's other events stay")
        #expect(hook.contentType == "json" && hook.insecureSSL == "0")
        #expect(hook.secret == Self.secret, "config replaced as a whole carries the secret, or GitHub drops it")
        #expect(setup.writes == 1)
        #expect(try await setup.run(["--repo", "acme/widgets"]).stdout.contains("nothing written"))
        #expect(setup.writes == 1)
    }

    @Test("--check writes nothing, lists the problems and recent deliveries, and exits 1 on any problem")
    func check() async throws {
        let setup = try Self.setup()
        // No hook yet.
        let none = try await setup.run(["--repo", "acme/widgets", "--check"])
        #expect(none.status == 1)
        #expect(none.stdout.contains("no hook posts to \(Self.hookURL)"))
        // A hook that is right, whose deliveries the listener took.
        let listener = try HTTPServer(configuration: HTTPServer.Configuration(listen: "127.0.0.1:0")) { _ in
            .json(202, [:])
        }
        defer { listener.stop() }
        setup.github.setWebhookURL("http://127.0.0.1:\(listener.port)/webhook")
        setup.github.hookStore.add(owner: Self.repository, id: 1, url: Self.hookURL, secret: Self.secret)
        // The log's action comes from the payload: whoever names things in the repository chose it.
        let hostile = #"{"action": "requested\u001b[2J\u202e\u0000"}"#
        #expect(await setup.github.deliver(event: "workflow_run", body: Data(hostile.utf8)) == 202)
        let right = try await setup.run(["--repo", "acme/widgets", "--check"])
        #expect(right.status == 0, "\(right.stdout) \(right.stderr)")
        #expect(right.stdout.contains("problems: none"))
        #expect(right.stdout.contains(#"workflow_run.requested\u{1B}[2J\u{202E}\u{00}  202"#), "\(right.stdout)")
        #expect(!right.stdout.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" || $0 == "\0" })
        let json = try #require(try await setup.run(["--repo", "acme/widgets", "--check", "--json"]).json)
        #expect(json["result"] == "checked" && json["ok"] == true)
        #expect(json["deliveries"]?.arrayValue?.first?["status_code"] == 202)
        #expect(json["deliveries"]?.arrayValue?.first?["ok"] == true)
        #expect(
            Set(json.objectValue?.keys.map { $0 } ?? [])
                == ["target", "url", "result", "ok", "hook", "problems", "deliveries"])
        // The listener gone: the newest delivery failed, which --check reports.
        setup.github.setWebhookURL("http://127.0.0.1:1/webhook")
        #expect(await setup.github.deliver(event: "workflow_job", body: Data(#"{"action": "queued"}"#.utf8)) == 0)
        let failed = try await setup.run(["--repo", "acme/widgets", "--check"])
        #expect(failed.status == 1)
        #expect(failed.stdout.contains("most recent delivery reached nothing"))
        #expect(failed.stdout.contains("FAILED"))
        #expect(setup.writes == 0, "--check never writes")
    }

    @Test("--check of a wrong hook names each problem, exits 1 and writes nothing")
    func checkWrongHook() async throws {
        let setup = try Self.setup()
        setup.github.hookStore.add(
            owner: Self.repository, active: false, events: ["workflow_job"], url: Self.hookURL, contentType: "form")
        let result = try await setup.run(["--repo", "acme/widgets", "--check", "--json"])
        #expect(result.status == 1)
        let json = try #require(result.json)
        #expect(json["ok"] == false)
        #expect(
            json["problems"]?.arrayValue?.compactMap { $0["code"]?.stringValue } == [
                "inactive", "missing_event:workflow_run", "form_content_type", "no_secret",
            ])
        #expect(setup.writes == 0)
    }

    @Test("GitHub's 404 and 403 name the permission needed, for a repository and an organisation, without a backtrace")
    func refusals() async throws {
        let setup = try Self.setup()
        setup.github.hookStore.setAccess(.hidden, for: Self.repository)
        let hidden = try await setup.run(["--repo", "acme/widgets"])
        #expect(hidden.status == 1)
        #expect(hidden.stderr.contains("(404)") && hidden.stderr.contains("admin:repo_hook"))
        #expect(hidden.stderr.contains("Webhooks: read and write"))
        Self.expectClean(hidden)

        setup.github.hookStore.setAccess(.forbidden, for: "/orgs/acme")
        let forbidden = try await setup.run(["--org", "acme", "--json"])
        #expect(forbidden.status == 1)
        #expect(forbidden.stderr.contains("(403)") && forbidden.stderr.contains("admin:org_hook"))
        #expect(forbidden.json?["result"] == "failed")
        #expect(forbidden.json?["error"]?["status"] == 403)
        Self.expectClean(forbidden)

        // Allowed to read, not to write: the list works, the creation is refused the same way.
        setup.github.hookStore.setAccess(.read, for: Self.repository)
        let readOnly = try await setup.run(["--repo", "acme/widgets"])
        #expect(readOnly.status == 1)
        #expect(
            readOnly.stderr.contains("POST /repos/acme/widgets/hooks") && readOnly.stderr.contains("admin:repo_hook"))
        #expect(setup.hooks.isEmpty)
        Self.expectClean(readOnly)

        let wrongToken = try Self.setup(github: setup.github, credential: #""token": "ghp_wrong""#)
        let refused = try await wrongToken.run(["--repo", "acme/widgets"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("(401)") && !refused.stderr.contains("ghp_wrong"))
    }

    @Test("an organisation's hook is created under /orgs, on an Enterprise Server's /api/v3")
    func organizationOnEnterprise() async throws {
        let setup = try Self.setup(prefix: FakeGitHubAPI.enterprisePrefix)
        let result = try await setup.run(["--org", "acme"])
        #expect(result.status == 0, "\(result.stderr)")
        let hook = try #require(setup.github.hookStore.hooks(of: "/orgs/acme").first)
        #expect(hook.url == Self.hookURL && hook.secret == Self.secret)
        let paths = setup.github.requests.map(\.path)
        #expect(!paths.isEmpty && paths.allSatisfy { $0.hasPrefix("/api/v3/orgs/acme/hooks") }, "\(paths)")
    }

    @Test("every page of the hook list is read: the bridge's hook on a later page is found, not created again")
    func pagination() async throws {
        let setup = try Self.setup()
        setup.github.hookStore.setPageLimit(2)
        for index in 0..<5 {
            setup.github.hookStore.add(owner: Self.repository, events: ["push"], url: "https://ci\(index).example.com")
        }
        setup.github.hookStore.add(owner: Self.repository, url: Self.hookURL, secret: Self.secret)
        let result = try await setup.run(["--repo", "acme/widgets"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("nothing written"))
        #expect(setup.writes == 0)
        #expect(setup.github.requests.filter { $0.path == "\(Self.repository)/hooks" }.count == 3)
    }

    @Test("--url wins over public_url; with neither, or without github.api or a secret, exit 78 naming the key")
    func urlAndConfiguration() async throws {
        let setup = try Self.setup(publicURL: nil)
        let missing = try await setup.run(["--repo", "acme/widgets"])
        #expect(missing.status == 78)
        #expect(missing.stderr.contains("public_url"))
        let explicit = try await setup.run(["--repo", "acme/widgets", "--url", "https://other.example.com/webhook"])
        #expect(explicit.status == 0, "\(explicit.stderr)")
        #expect(setup.hooks.first?.url == "https://other.example.com/webhook")

        let noAPI = try Self.setup(withAPI: false)
        let refused = try await noAPI.run(["--repo", "acme/widgets"])
        #expect(refused.status == 78 && refused.stderr.contains("github.api"))
        let noSecret = try setup.directory.write(
            "no-secret.json",
            #"{"public_url": "\#(Self.publicURL)", "github": {"api": {"url": "\#(setup.github.baseURL)", "token": "\#(Self.token)"}}}"#
        )
        let secretless = try await BridgeProcess.run(
            ["github", "hooks", "--config", noSecret, "--repo", "acme/widgets"], in: setup.directory)
        #expect(secretless.status == 78 && secretless.stderr.contains("github.webhook_secrets"))
        let checkOnly = try await BridgeProcess.run(
            ["github", "hooks", "--config", noSecret, "--repo", "acme/widgets", "--check"], in: setup.directory)
        #expect(checkOnly.status == 1, "--check needs no secret: \(checkOnly.stderr)")
        #expect(checkOnly.stdout.contains("no hook posts to \(Self.hookURL)"))
        #expect(try await setup.run([]).status == 64)
        #expect(try await setup.run(["--repo", "acme/widgets", "--org", "acme"]).status == 64)
        #expect(try await setup.run(["--repo", "acme/../x"]).status == 64)
        #expect(try await BridgeProcess.run(["github", "nope"], in: setup.directory).status == 64)
    }

    @Test("with a GitHub App: the installation token of the repository's account writes the hook")
    func withApp() async throws {
        let publicKey = try TestAssets.fixture("github-app/test-app.public-key.pem")
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .app(id: 77, publicKeyPEM: publicKey))
        let keyFile = TestAssets.fixtures.appendingPathComponent("github-app/test-app.private-key.pem").path
        let setup = try Self.setup(
            github: github, credential: #""app_id": 77, "private_key_file": "\#(keyFile)""#)
        let result = try await setup.run(["--repo", "acme/widgets"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(setup.hooks.first?.url == Self.hookURL)
        let hookCalls = github.requests.filter { $0.path.hasPrefix("\(Self.repository)/hooks") }
        #expect(!hookCalls.isEmpty && hookCalls.allSatisfy { $0.credential == "installation" })
    }
}
