import BridgeCore
import BridgeTestSupport
import Foundation
import GitHubClient
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The hook calls of the client against the fake GitHub, and the fake holding to what GitHub does
/// with hooks: 422 for what it refuses, `config` replaced as a whole, secrets never shown back.
@Suite("GitHub hook calls")
struct GitHubHookCallsTests {
    static let owner = HookOwner.repository(owner: "acme", name: "widgets")
    static let url = "https://hooks.example.com/webhook"
    static let secret = "hook-calls-secret-0123456789"

    static func client(_ github: FakeGitHubAPI) -> GitHubAPIClient {
        GitHubAPIClient(baseURL: github.baseURL, credential: .token("ghp_good"), version: "test")
    }

    static func refusal(_ body: @Sendable () async throws(GitHubAPIClient.Failure) -> Void) async -> GitHubAPIClient
        .Failure?
    {
        do throws(GitHubAPIClient.Failure) {
            try await body()
            return nil
        } catch {
            return error
        }
    }

    @Test("a created hook is listed as GitHub lists it, its secret shown as ********, never in clear")
    func createAndList() async throws {
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .token("ghp_good"))
        let client = Self.client(github)
        let created = try await client.createHook(of: Self.owner, HookPlan.creation(url: Self.url, secret: Self.secret))
        #expect(created.url == Self.url && created.hasSecret && created.events == HookPlan.events)
        let listed = try await client.hooks(of: Self.owner)
        #expect(listed == [created])
        var request = URLRequest(url: try #require(URL(string: github.baseURL + "/repos/acme/widgets/hooks")))
        request.setValue("Bearer ghp_good", forHTTPHeaderField: "Authorization")
        let (body, _) = try await URLSession.shared.data(for: request)
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.contains(#""secret":"********""#) && !text.contains(Self.secret), "\(text)")
        #expect(github.hookStore.hooks(of: "/repos/acme/widgets").first?.secret == Self.secret)
    }

    @Test("GitHub's 422: an unknown event, a missing URL, another name than web, a second hook on the same URL")
    func validation() async throws {
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .token("ghp_good"))
        let client = Self.client(github)
        let cases: [(JSONValue, String)] = [
            (["name": "web", "events": ["workflow_jobs"], "config": ["url": .string(Self.url)]], "Invalid event"),
            (["name": "web", "events": ["push"], "config": ["content_type": "json"]], "URL"),
            (["name": "slack", "config": ["url": .string(Self.url)]], "web"),
        ]
        for (body, expected) in cases {
            let failure = await Self.refusal { () async throws(GitHubAPIClient.Failure) in
                _ = try await client.createHook(of: Self.owner, body)
            }
            #expect(failure?.status == 422, "\(body)")
            #expect(failure?.description.contains(expected) == true, "\(failure?.description ?? "")")
        }
        _ = try await client.createHook(of: Self.owner, HookPlan.creation(url: Self.url, secret: Self.secret))
        let twice = await Self.refusal { () async throws(GitHubAPIClient.Failure) in
            _ = try await client.createHook(of: Self.owner, HookPlan.creation(url: Self.url, secret: Self.secret))
        }
        #expect(twice?.description.contains("already exists") == true)
        #expect(github.hookStore.hooks(of: "/repos/acme/widgets").count == 1)
    }

    @Test("a PATCH with config but no secret leaves the hook with none, as GitHub does; without config it stays")
    func patchDropsSecret() async throws {
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .token("ghp_good"))
        let id = github.hookStore.add(owner: "/repos/acme/widgets", active: false, url: Self.url, secret: Self.secret)
        let client = Self.client(github)
        let activated = try await client.updateHook(of: Self.owner, id: id, ["active": true])
        #expect(activated.active && activated.hasSecret)
        let stripped = try await client.updateHook(
            of: Self.owner, id: id, ["config": ["url": .string(Self.url), "content_type": "json"]])
        #expect(!stripped.hasSecret)
        #expect(github.hookStore.hooks(of: "/repos/acme/widgets").first?.secret == nil)
        let noURL = await Self.refusal { () async throws(GitHubAPIClient.Failure) in
            _ = try await client.updateHook(of: Self.owner, id: id, ["config": ["content_type": "json"]])
        }
        #expect(noURL?.status == 422)
        let badEvent = await Self.refusal { () async throws(GitHubAPIClient.Failure) in
            _ = try await client.updateHook(of: Self.owner, id: id, ["events": ["nope"]])
        }
        #expect(badEvent?.status == 422)
    }

    @Test("403 and 404 from the hook endpoints arrive as forbidden and notFound")
    func permissions() async throws {
        let github = try FakeGitHubAPI(secret: Self.secret, credentials: .token("ghp_good"))
        let client = Self.client(github)
        github.hookStore.setAccess(.hidden, for: "/repos/acme/widgets")
        let hidden = await Self.refusal { () async throws(GitHubAPIClient.Failure) in
            _ = try await client.hooks(of: Self.owner)
        }
        #expect(hidden?.status == 404)
        github.hookStore.setAccess(.forbidden, for: "/orgs/acme")
        let forbidden = await Self.refusal { () async throws(GitHubAPIClient.Failure) in
            _ = try await client.hooks(of: .organization("acme"))
        }
        #expect(forbidden?.status == 403)
    }
}
