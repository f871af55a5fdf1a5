import BridgeCore
import Foundation
import HTTPClientSupport

/// The webhook calls of `github hooks` and of recovery's search for the bridge's hooks: list,
/// create and update a repository's or organisation's hooks, as GitHub's REST reference gives
/// them (`GET`/`POST /repos/{owner}/{repo}/hooks`, `PATCH …/hooks/{hook_id}`, and the same under
/// `/orgs/{org}`). They go through the same pacing, ETags and credentials as every other call.
extension GitHubAPIClient {
    /// Every hook of `owner`, following the `Link: <…&page=N>; rel="next"` pages to the last.
    public func hooks(of owner: HookOwner, gate: SendGate? = nil) async throws(Failure) -> [WebhookHook] {
        var hooks: [WebhookHook] = []
        var page: Int? = 1
        // GitHub keeps a few dozen hooks at most per repository or organisation; the bound only
        // stops a server that links to a next page forever.
        var pagesLeft = 100
        while let number = page, pagesLeft > 0 {
            pagesLeft -= 1
            let path = owner.hooksPath + "?per_page=100" + (number > 1 ? "&page=\(number)" : "")
            let answer = try await call("GET", path, as: owner.credentialOwner, gate: gate)
            guard let entries = (try? JSONValue(parsing: answer.body))?.arrayValue else {
                throw .failed("GitHub's answer to GET \(owner.hooksPath) is not a JSON array")
            }
            hooks += entries.compactMap(WebhookHook.init)
            page = Self.nextPage(answer.link).flatMap { $0 > number ? $0 : nil }
        }
        return hooks
    }

    /// `POST …/hooks` with `body` (see `HookPlan.creation`); the hook as GitHub created it.
    public func createHook(of owner: HookOwner, _ body: JSONValue) async throws(Failure) -> WebhookHook {
        let answer = try await call(
            "POST", owner.hooksPath, as: owner.credentialOwner, body: Data(body.canonicalString.utf8))
        guard let hook = (try? JSONValue(parsing: answer.body)).flatMap(WebhookHook.init) else {
            throw .failed("GitHub's answer to POST \(owner.hooksPath) is not a hook")
        }
        return hook
    }

    /// `PATCH …/hooks/{id}` with `body`; the hook as GitHub left it.
    public func updateHook(of owner: HookOwner, id: Int, _ body: JSONValue) async throws(Failure) -> WebhookHook {
        let path = owner.hooksPath + "/\(id)"
        let answer = try await call("PATCH", path, as: owner.credentialOwner, body: Data(body.canonicalString.utf8))
        guard let hook = (try? JSONValue(parsing: answer.body)).flatMap(WebhookHook.init) else {
            throw .failed("GitHub's answer to PATCH \(path) is not a hook")
        }
        return hook
    }

    /// The `page` of the `rel="next"` link, or nil on the last page.
    static func nextPage(_ link: String?) -> Int? { nextLink(link, item: "page").flatMap(Int.init) }
}

extension HookOwner {
    /// Whose credentials act on these hooks: the repository's installation, or the organisation's.
    var credentialOwner: GitHubAPIClient.Owner {
        .account(account, repository: repository)
    }
}
