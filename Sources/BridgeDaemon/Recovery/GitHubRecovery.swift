import BridgeCore
import Foundation
import GitHubClient

/// Recovery through GitHub's REST API (`github.api`): what the two loops share, the sweeps of the
/// hooks' delivery logs (`GitHubRecovery+Sweeps.swift`) and the lookups of quiet runs
/// (`GitHubRecovery+Lookups.swift`). One client, so GitHub's rate limit, ETags and installation
/// tokens are shared by both; every call of either asks the leader fence just before it goes.
struct GitHubRecovery: Sendable {
    let client: FencedGitHub
    let service: BridgeService
    let settings: GitHubAPISettings
    let logger: Logger
    let metrics: Metrics
    let board: RecoveryBoard
    let now: @Sendable () -> Double
    /// `<public_url>/webhook`: with no `hooks` configured, recovery sweeps the hooks posting there.
    var webhookURL: String? = nil

    /// What recovery reads from and writes to the store (`RecoveryLedger`).
    var ledger: RecoveryLedger { RecoveryLedger(service: service, log: logger) }
}

extension GitHubRecovery {
    /// Says what stops recovery, with what to fix, once per distinct problem (a refused credential
    /// fails every sweep and lookup until someone fixes it; a spent rate limit until its reset),
    /// and shows it on the status page and `/metrics` until a call succeeds again.
    func blocked(by failure: GitHubAPIClient.Failure, hint: String, _ metadata: [String: JSONValue]) {
        guard board.setProblem("\(failure.description) (\(hint))") else { return }
        if case .rateLimited(let until) = failure {
            logger.notice(
                "GitHub's rate limit is spent; recovery waits for its reset",
                metadata.merging(["github.rate_limit_reset": .string(GitHubTimestamp.format(until))]) { $1 })
        } else {
            logger.error(
                "recovery from GitHub failed",
                metadata.merging(["error": .string("\(failure.description) (\(hint))")]) { $1 })
        }
    }

    /// A call went through: nothing blocks recovery (said when something did).
    func unblocked() {
        if board.setProblem(nil) { logger.notice("recovery from GitHub works again", [:]) }
    }

    /// What to do about a refused credential, for either loop.
    static let credentialHint = "check github.api's token (or the App's id and private key): GitHub does not accept it"
}
