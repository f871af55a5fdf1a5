import BridgeCore
import Foundation
import GitHubClient

/// Recovery through GitHub's REST API (`github.api`): what the two loops share, the sweeps of the
/// hooks' delivery logs (`GitHubRecovery+Sweeps.swift`) and the lookups of quiet runs
/// (`GitHubRecovery+Lookups.swift`). One client, so GitHub's rate limit, ETags and installation
/// tokens are shared by both.
struct GitHubRecovery: Sendable {
    let client: GitHubAPIClient
    let service: BridgeService
    let settings: GitHubAPISettings
    let logger: Logger
    let metrics: Metrics
    let board: RecoveryBoard
    let now: @Sendable () -> Double
}
