import BridgeCore
import BridgeStore
import Foundation
import GitHubClient
import WebhookServer

/// `POST /actions/{token}` on the webhook listener: a button pressed on a phone.
///
/// The request is not signed (it comes from the phone, with exactly what the button carries), so
/// the token is the whole authority: `ActionPresses.press` spends it in one conditional update
/// (so of two presses at once, on one instance or two, exactly one goes on), checks the run still
/// allows the action, and records the press; then this asks GitHub, once, and records the answer.
/// A review approves or rejects the one environment its token names. Anything else about the
/// request (headers, body) is ignored.
public struct ActionDesk: Sendable {
    /// Spends, checks and records each press (`ActionPresses`).
    public var presses: ActionPresses
    public var client: GitHubAPIClient
    public var logger: Logger
    public var clock: @Sendable () -> UnixTime
    /// The 404 line for tokens nobody knows: one a second, with the count folded into it.
    let unknownLog = LogRateLimit(period: 1)

    public init(
        presses: ActionPresses, client: GitHubAPIClient, logger: Logger,
        clock: @escaping @Sendable () -> UnixTime = { Date().timeIntervalSince1970 }
    ) {
        self.presses = presses
        self.client = client
        self.logger = logger
        self.clock = clock
    }

    /// The same answer for every token that does nothing: unknown, used, expired, forged, or for a
    /// run the action no longer applies to. It never says which.
    static let notFound = HTTPResponse.json(404, ["error": "not_found"])

    /// Answers a press once GitHub answered (the phone ignores the answer; a test reads it).
    public func handle(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        guard request.method == "POST" else {
            var response = HTTPResponse.json(405, ["error": "method_not_allowed", "allow": "POST"])
            response.headers.append(("Allow", "POST"))
            return respond(response)
        }
        let segment = request.path.dropFirst(ActionSettings.pathPrefix.count)
        guard let token = ActionToken(path: segment) else {
            sayUnknown(request)
            return respond(Self.notFound)
        }
        let desk = self
        Task {
            respond(await desk.press(token, request))
        }
    }

    private func press(_ token: ActionToken, _ request: HTTPRequest) async -> HTTPResponse {
        guard case .accepted(let press) = await presses.press(token, at: clock()) else {
            sayUnknown(request)
            return Self.notFound
        }
        let refusal = await perform(press)
        await presses.finishPress(press, refusal: refusal, at: clock())
        if let refusal {
            return .json(
                502, ["status": "refused", "github_status": refusal.status.map { .number(Double($0)) } ?? .null])
        }
        return .json(200, ["status": "done", "action": .string(press.binding.kind.rawValue)])
    }

    /// Asks GitHub for the press's action; nil when GitHub took it, else its status and why.
    func perform(_ press: ActionPress) async -> (status: Int?, detail: String)? {
        let run = press.binding.run
        do {
            switch press.binding.kind {
            case .rerun:
                try await client.rerunFailedJobs(repository: run.repository, runID: run.runID)
            case .cancel:
                try await client.cancel(repository: run.repository, runID: run.runID)
            case .approve, .reject:
                // Exactly the environment the token was minted for, by its id in GitHub's list
                // now: never the other deployments the run waits on.
                guard let environment = press.binding.environment, !environment.isEmpty else {
                    return (nil, "the button names no environment; nothing was asked")
                }
                let pending = try await client.pendingDeployments(repository: run.repository, runID: run.runID)
                guard let deployment = pending.first(where: { $0.environmentName == environment }) else {
                    return (nil, "GitHub lists no deployment of this run to \(environment) waiting for review")
                }
                guard deployment.canApprove else {
                    return (
                        nil,
                        "the GitHub credential's user may not review deployments to \(environment)"
                            + " (use the token of a required reviewer)"
                    )
                }
                let verb = press.binding.kind == .approve ? "Approved" : "Rejected"
                try await client.reviewDeployments(
                    repository: run.repository, runID: run.runID, environmentIDs: [deployment.environmentID],
                    approve: press.binding.kind == .approve,
                    comment: "\(verb) from a phone (\(press.person)) through pushward-bridge")
            }
            return nil
        } catch {
            return (error.status, error.description)
        }
    }

    private func sayUnknown(_ request: HTTPRequest) {
        guard let dropped = unknownLog.admit(at: clock()) else { return }
        var metadata: [String: JSONValue] = [:]
        if let remote = request.remoteAddress { metadata["http.remote"] = .string(remote) }
        if dropped > 0 { metadata["log.dropped"] = .number(Double(dropped)) }
        logger.info("a button's token did nothing (unknown, used, expired or no longer applicable)", metadata)
    }
}
