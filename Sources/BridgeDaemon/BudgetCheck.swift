import BridgeCore
import Foundation
import PushWardClient

/// The month's budget as `check-config` shows it: what PushWard says was used and allowed, when
/// the count starts over, how many runs the planner expects by then, and the level it would give
/// a run arriving now. So an operator sees, before starting the daemon, whether the next runs will
/// get rich cards, thin ones, or none, and why.
///
/// The report is pure (the answer, the forecast and the clock are inputs); only `read` talks to
/// PushWard, once, with a short timeout: `check-config` must answer quickly even when PushWard
/// does not.
public enum BudgetCheck {
    /// How long `check-config` waits for `GET /auth/me`.
    public static let timeout: Double = 5

    /// One `GET /auth/me` with `configuration`'s URL and key; nil without a key.
    public static func read(_ configuration: BridgeConfiguration, version: String) async -> PushWardUsageAnswer? {
        guard let key = configuration.apiKey else { return nil }
        let client = PushWardClient(
            configuration: .init(
                baseURL: configuration.pushwardURL, apiKey: key, timeout: timeout, version: version))
        return await client.usage()
    }

    /// Where the forecast comes from: the runs a database recorded over the last 14 days, or
    /// nothing yet (the planner's prior alone).
    public struct Forecast: Sendable {
        public var arrivals: RunArrivals
        public var runsHoldingActivities: Int
        /// In words, for the report: "the prior …" or "runs recorded in PATH".
        public var source: String

        public init(arrivals: RunArrivals, runsHoldingActivities: Int, source: String) {
            self.arrivals = arrivals
            self.runsHoldingActivities = runsHoldingActivities
            self.source = source
        }

        /// No history: the prior rate only.
        public static let prior = Forecast(
            arrivals: RunArrivals(), runsHoldingActivities: 0,
            source: "the prior of \(Int(BudgetPlanner.priorRunsPerDay)) runs a day (no database yet)")
    }

    /// The `budget` member of `check-config`'s output.
    ///
    /// - Without a key: a string saying so (dry-run sends nothing, so nothing is counted); `answer`
    ///   is not looked at.
    /// - With `pushward.budget: unlimited`: a string saying the planner is off.
    /// - Otherwise the usage with `pushward.budget` applied as the daemon applies it, the
    ///   forecast and the planner's choice; or, when the read failed, why, under `error`.
    public static func report(
        _ configuration: BridgeConfiguration, answer: PushWardUsageAnswer?, forecast: Forecast, at now: UnixTime
    ) -> JSONValue {
        guard configuration.apiKey != nil else { return "dry-run: no API key" }
        if configuration.pushwardBudget == .unlimited {
            return "unlimited: pushward.budget turns the planner off; every run is drawn at the configured level"
        }
        guard let answer else { return ["error": "PushWard was not asked (GET /auth/me)"] }
        let usage: PushWardUsage
        switch answer {
        case .usage(let read): usage = read
        case .problem(let problem):
            let code = problem.code.map { " \($0)" } ?? ""
            // PushWard's words reach a terminal: sanitized like every other text from outside.
            let detail = problem.detail.map { ": \(TerminalText.sanitized($0))" } ?? ""
            return ["error": .string("GET /auth/me answered \(problem.status)\(code)\(detail)")]
        case .unreadable(let status, let error):
            return [
                "error": .string("GET /auth/me answered \(status) with a body that is not a usage document: \(error)")
            ]
        case .noAnswer(let reason):
            return [
                "error": .string(
                    "GET /auth/me got no answer within \(Int(timeout)) s: \(TerminalText.sanitized(reason))")
            ]
        }
        let budget = configuration.pushwardBudget.budget(from: usage)
        let decision = BudgetPlanner.decide(
            run: RunKey(repository: "", runID: 0, attempt: 1), budget: budget,
            arrivalsPerSecond: forecast.arrivals.rate(at: now, priorPerDay: BudgetPlanner.priorRunsPerDay),
            runsHoldingActivities: forecast.runsHoldingActivities, inForce: nil, at: now)
        var reason = decision.reason
        if configuration.activity.fidelity != .auto {
            reason =
                "pushward.fidelity is \(configuration.activity.fidelity.rawValue), so every run is drawn at it; "
                + "with auto the planner would choose: \(reason)"
        }
        return [
            "used": .number(Double(budget.used)),
            "limit": budget.limit.map { .number(Double($0)) } ?? "unlimited",
            "resets_at": budget.resetsAt.map { .string(GitHubTimestamp.format($0)) } ?? .null,
            "forecast_runs": decision.forecastRuns.map { .number(($0 * 10).rounded() / 10) } ?? .null,
            "forecast_from": .string(forecast.source),
            "next_run": [
                "level": .string(decision.level?.rawValue ?? "none"),
                "reason": .string(reason),
            ],
        ]
    }
}
