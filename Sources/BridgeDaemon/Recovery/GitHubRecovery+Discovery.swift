import BridgeCore
import Foundation
import GitHubClient

/// Finding the hooks to sweep when `github.api.hooks` is left out and `public_url` is set: the
/// hooks that post to `<public_url>/webhook` (what `github hooks` creates), in the repositories
/// the bridge has runs of and in their owners, should those be organisations.
extension GitHubRecovery {
    /// How many of the most recent runs name the repositories looked in.
    static let discoveryRuns = 500
    /// How often the hooks are looked for again: each look costs two requests per repository
    /// (a 404 is not cached by an ETag), which every sweep would spend too fast.
    static let rediscoveryInterval: Double = 3_600

    /// What the last look found, when, and whether there was anywhere to look.
    struct Discovery {
        var hooks: [GitHubAPISettings.Hook]
        var at: Double
        var lookedAnywhere: Bool
    }

    /// The hooks to sweep this round: the configured ones, else those `discover` found, looked
    /// for again after `rediscoveryInterval`, and at every sweep while the bridge had no run of
    /// any repository to look in (a fresh start: its first runs name them).
    func hooksToSweep(_ last: inout Discovery?) async -> [GitHubAPISettings.Hook] {
        guard settings.hooks.isEmpty else { return settings.hooks }
        if let last, last.lookedAnywhere, now() - last.at < Self.rediscoveryInterval { return last.hooks }
        last = await discover()
        return last?.hooks ?? []
    }

    /// Every hook posting to the bridge's webhook URL among the repositories of the last
    /// `discoveryRuns` runs and their owners. A 403 or 404 there is no failure: a user's account
    /// has no organisation hooks, and a token may administer some repositories and not others.
    func discover() async -> Discovery {
        let started = now()
        guard let url = webhookURL else { return Discovery(hooks: [], at: started, lookedAnywhere: true) }
        let repositories = await ledger.recentRepositories(runs: Self.discoveryRuns)
        var owners = repositories.compactMap(HookOwner.init(repository:))
        var accounts: [String] = []
        for owner in owners where !accounts.contains(owner.account) { accounts.append(owner.account) }
        owners += accounts.compactMap(HookOwner.init(organization:))
        var found: [GitHubAPISettings.Hook] = []
        for owner in owners where client.fence.permits() {
            do {
                for hook in try await client.hooks(of: owner) where hook.url == url {
                    found.append(owner.hook(id: hook.id))
                }
            } catch {
                switch error {
                case .forbidden, .notFound:
                    continue
                case .withheld:
                    // The lead may have gone: the next leader looks again.
                    return Discovery(hooks: found, at: started, lookedAnywhere: false)
                default:
                    blocked(
                        by: error, hint: "the bridge's hooks are looked for again at the next sweep",
                        ["github.hooks": .string(owner.description)])
                    return Discovery(hooks: found, at: started, lookedAnywhere: false)
                }
            }
        }
        let names = found.map(\.description)
        if names != board.current.discoveredHooks {
            board.update { $0.discoveredHooks = names }
            logger.notice(
                "found the hooks that post to the bridge's URL; their delivery logs are swept",
                ["github.hooks": .array(names.map { .string($0) }), "github.hook_url": .string(url)])
        }
        return Discovery(hooks: found, at: started, lookedAnywhere: !owners.isEmpty)
    }
}
