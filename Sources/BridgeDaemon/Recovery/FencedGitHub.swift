import BridgeCore
import GitHubClient
import HTTPClientSupport

/// The GitHub calls recovery makes, each with the leader fence's gate (`LeaderFence.gate`),
/// which the client asks just before the request goes: a sweep or a round of lookups begun while
/// leading, then frozen (SIGSTOP, a stalled VM) past the lease, sends nothing more once resumed,
/// not even the rest of its round. A refused call fails with `.withheld`.
///
/// Recovery only: a press from a phone (`ActionDesk`) is taken by whichever instance receives it,
/// and its single-use token, spent in the database, is what makes it happen once.
struct FencedGitHub: Sendable {
    let client: GitHubAPIClient
    let fence: LeaderFence

    func deliveries(of hook: GitHubAPISettings.Hook, cursor: String?) async throws(GitHubAPIClient.Failure)
        -> GitHubAPIClient.DeliveryPage
    {
        try await client.deliveries(of: hook, cursor: cursor, gate: fence.gate())
    }

    func redeliver(_ id: Int, of hook: GitHubAPISettings.Hook) async throws(GitHubAPIClient.Failure) {
        try await client.redeliver(id, of: hook, gate: fence.gate())
    }

    func run(repository: String, id: Int, attempt: Int) async throws(GitHubAPIClient.Failure) -> JSONValue {
        try await client.run(repository: repository, id: id, attempt: attempt, gate: fence.gate())
    }

    func jobs(repository: String, runID: Int, attempt: Int) async throws(GitHubAPIClient.Failure) -> JSONValue {
        try await client.jobs(repository: repository, runID: runID, attempt: attempt, gate: fence.gate())
    }

    func hooks(of owner: HookOwner) async throws(GitHubAPIClient.Failure) -> [WebhookHook] {
        try await client.hooks(of: owner, gate: fence.gate())
    }

    /// What GitHub last said of the credential's hourly allowance.
    var rateLimit: GitHubAPIClient.RateLimit? {
        get async { await client.rateLimit }
    }
}
