import BridgeCore
import Foundation
import HTTPClientSupport
import PushWardClient

/// The budget reader's loop: reads the month's usage (`GET /auth/me`) at start (or on taking the
/// lead), every `interval` and whenever PushWard said the quota is spent or the account is full
/// (`refresh`), and hands it to the service (`BridgeService.updateBudget`). A failed read leaves the
/// last known budget. Only the leader reads (its planner is the one that sends): a follower asks
/// the fence again within a second of taking the lead.
struct BudgetReader: Sendable {
    /// How often the budget is read again: `GET /auth/me` costs no quota, and 15 minutes keeps the
    /// planner's figures close to PushWard's between the counts the daemon keeps itself.
    static let interval: Double = 15 * 60

    let service: BridgeService
    let transport: any PushWardTransport
    let refresh: WakeupSignal
    let fence: LeaderFence
    let logger: Logger
    var clock: @Sendable () -> UnixTime = { Date().timeIntervalSince1970 }

    func run() async {
        while !Task.isCancelled {
            // A read is a request like any other to PushWard's per-minute limit: the pacer's.
            if service.settings.pacesRequests {
                let (admitted, retryAt) = await service.admitRead(at: clock())
                guard admitted else {
                    try? await Task.sleep(for: .seconds(max(0.05, retryAt - clock())))
                    continue
                }
            }
            let gate = fence.gate()
            let answer = await transport.usage(gate: gate)
            if gate?.refused == true {
                await refresh.wait(atMost: GitHubRecovery.followerPoll)
                continue
            }
            switch answer {
            case .usage(let usage):
                let (budget, previous) = await service.updateBudget(usage, at: clock())
                if previous?.limit != budget.limit || previous == nil { say(budget) }
            case .problem(let problem):
                if problem.status == 429, problem.code != "quota.exceeded" {
                    await service.noteRateLimited(retryAfter: problem.retryAfter, at: clock())
                }
                logger.warning(
                    "could not read the PushWard budget (GET /auth/me); planning with the last known one",
                    ["push.status": .number(Double(problem.status)), "push.problem": .string(problem.summary)])
            case .unreadable(let status, let error):
                logger.warning(
                    "could not read the PushWard budget (GET /auth/me); planning with the last known one",
                    ["push.status": .number(Double(status)), "push.problem": .string("\(error)")])
            case .noAnswer(let reason):
                logger.warning(
                    "could not read the PushWard budget (GET /auth/me); planning with the last known one",
                    ["push.problem": .string(reason)])
            }
            await refresh.wait(atMost: Self.interval)
        }
    }

    /// Said when the budget is first read, and when its limit changes.
    private func say(_ budget: PushBudget) {
        logger.notice(
            "PushWard budget read",
            [
                "budget.used": .number(Double(budget.used)),
                "budget.limit": budget.limit.map { .number(Double($0)) } ?? .null,
                "budget.resets_at": budget.resetsAt.map { .string(GitHubTimestamp.format($0)) } ?? .null,
                "budget.fidelity": .string(service.settings.configuration.activity.fidelity.rawValue),
            ])
    }
}
