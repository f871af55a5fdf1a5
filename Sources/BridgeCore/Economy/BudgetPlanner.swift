import Foundation

/// Chooses, for each run about to take a card, the richest level whose expected cost fits what is
/// left of the month, so that the budget lasts until it resets and every run already on a card can
/// still end.
///
/// Pure: the budget, the forecast rate, the runs on a card and the clock are inputs.
/// - Remaining: the limit, less what was used, less `reservedForEnd` for each run on a card (its
///   end frame and end must never be the update that is refused).
/// - Forecast: the rate of runs wanting a card (`RunArrivals`, 14 days, with a prior) times the
///   time left before the reset.
/// - Choice: the richest level whose expected cost per run fits remaining ÷ forecast. Moving to a
///   richer level than the one in force needs 20 % to spare, so the level does not flap run by run.
/// - Rationing: when even `milestones` does not fit every forecast run, the share that fits gets a
///   card (chosen by run id, so the choice is stable and spread out) and the rest get none.
public enum BudgetPlanner {
    /// What a run costs at each level before there is history: the medians of `dispatch-bench`'s
    /// table (create, first frame, step changes, end frame, end) for common workflows.
    public static let expectedCost: [Fidelity: Double] = [.full: 12, .steps: 10, .milestones: 5]
    /// Runs a day expected before any have been seen.
    public static let priorRunsPerDay = 20.0
    /// How much richer a level must fit before the planner moves up to it.
    static let upgradeMargin = 1.2

    public static func decide(
        run: RunKey, budget: PushBudget, arrivalsPerSecond: Double, runsHoldingActivities: Int, inForce: Fidelity?,
        at now: UnixTime
    ) -> CardDecision {
        guard let limit = budget.limit else {
            return CardDecision(
                level: .full, reason: "the account has no monthly limit", decidedAt: now, remaining: nil,
                forecastRuns: nil)
        }
        let remaining = limit - budget.used - runsHoldingActivities * ActivitySettings.reservedForEnd
        let forecast = forecastRuns(budget: budget, arrivalsPerSecond: arrivalsPerSecond, at: now)
        let perRun = Double(remaining) / forecast
        let figures =
            "\(remaining) of \(limit) updates left after the end reserve, \(Int(forecast.rounded())) runs forecast "
            + "before the reset: \(formatted(perRun)) a run"
        let richness: [Fidelity: Int] = [.full: 3, .steps: 2, .milestones: 1]
        for level in Fidelity.concrete {
            let cost = expectedCost[level] ?? 0
            let moving = (richness[level] ?? 0) > (inForce.flatMap { richness[$0] } ?? 0) && inForce != nil
            if perRun >= cost * (moving ? upgradeMargin : 1), Double(remaining) >= cost {
                return CardDecision(
                    level: level, reason: "\(level.rawValue) (about \(Int(cost)) updates a run) fits: \(figures)",
                    decidedAt: now, remaining: remaining, forecastRuns: forecast)
            }
        }
        let cheapest = expectedCost[.milestones] ?? 5
        let share = max(0, min(1, perRun / cheapest))
        if Double(remaining) >= cheapest, share > 0, spread(run) < share {
            return CardDecision(
                level: .milestones,
                reason: "rationed: about \(Int((share * 100).rounded())) % of runs can have a card at milestones, "
                    + "and this is one: \(figures)", decidedAt: now, remaining: remaining, forecastRuns: forecast)
        }
        return CardDecision(
            level: nil,
            reason: "no card: not even milestones (about \(Int(cheapest)) updates) fits every run left this period "
                + "(\(figures)); runs already on a card still end", decidedAt: now, remaining: remaining,
            forecastRuns: forecast)
    }

    /// Runs expected to want a card before the budget resets (at least one: the run being decided).
    /// An unknown reset is taken as the end of a 30-day period.
    public static func forecastRuns(budget: PushBudget, arrivalsPerSecond: Double, at now: UnixTime) -> Double {
        let resetsAt = budget.resetsAt ?? now + 30 * 86_400
        return max(1, arrivalsPerSecond * max(0, resetsAt - now))
    }

    /// A number in [0, 1) fixed by the run's id, spread evenly: which runs of a rationed month
    /// get a card.
    static func spread(_ run: RunKey) -> Double {
        var z = UInt64(bitPattern: Int64(run.runID)) &+ UInt64(run.attempt) &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }

    static func formatted(_ value: Double) -> String {
        value.isFinite ? String(format: "%.1f", value) : "∞"
    }
}
