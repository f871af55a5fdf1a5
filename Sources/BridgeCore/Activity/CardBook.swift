/// The engine's cards and the push economy that decides them: each card's session, the floor under
/// its progress bar, which cards are to be decided (something happened to them, or their recorded
/// time came), and the month's budget with the forecast the planner picks a new run's level by.
/// The two live together because they move together: giving a run a card asks the budget, and the
/// level chosen is the one in force for the next. Other features read cards here and change them
/// only through its methods.
public struct CardBook: Sendable {
    /// Each card's session, by slug.
    public private(set) var sessions: [String: ActivitySession] = [:]
    /// Per slug, the floor under `progress` for the current owner, so the bar never moves back
    /// within an attempt (new `needs:` jobs raise the job count mid-run).
    public private(set) var progressFloors: [String: ProgressFloor] = [:]
    /// Cards something happened to since they were last decided: a delivery for their run, an
    /// answer from PushWard, a new owner. The dispatcher decides these, not every card.
    private var dirty: Set<String> = []
    /// When each card next needs deciding although nothing happens to it: a throttle window, a
    /// retry, the end frame, the end, a heartbeat. Recorded when it is decided.
    private var due: [String: UnixTime] = [:]
    /// Where the month's updates stand (from `GET /auth/me`); with a limit and `fidelity: auto`,
    /// the budget planner picks each new run's level. Nil: not known, the configured level applies.
    public private(set) var budget: PushBudget?
    /// Runs that wanted a card, per hour of the last 14 days: the planner's forecast.
    public private(set) var arrivals = RunArrivals()
    /// The level the planner chose last, which it moves up from only with room to spare.
    public private(set) var levelInForce: Fidelity?
    /// What the account holds of PushWard's 50 activities (`AccountRoom`).
    public var room = AccountRoom()

    public init() {}

    public subscript(slug: String) -> ActivitySession? { sessions[slug] }

    // MARK: Sessions

    /// Puts back a card read from storage; it is decided again.
    public mutating func restore(_ session: ActivitySession, floor: ProgressFloor?) {
        sessions[session.identity.slug] = session
        dirty.insert(session.identity.slug)
        progressFloors[session.identity.slug] = floor
    }

    /// Records `session` as the card on `slug`, to be written.
    public mutating func put(_ session: ActivitySession, on slug: String, changes: inout EngineChanges) {
        sessions[slug] = session
        changes.slugs.insert(slug)
    }

    /// Changes the card on `slug`, when there is one: it is written and (unless `redecide` is
    /// false: what changed cannot change what it sends) decided again. Returns whether there was
    /// a card.
    @discardableResult
    public mutating func update(
        _ slug: String, redecide: Bool = true, changes: inout EngineChanges, _ change: (inout ActivitySession) -> Void
    ) -> Bool {
        guard var session = sessions[slug] else { return false }
        change(&session)
        sessions[slug] = session
        changes.slugs.insert(slug)
        if redecide { dirty.insert(slug) }
        return true
    }

    /// Lets go of an ended card (storage keeps it): being due or dirty changes nothing for it.
    public mutating func forget(_ slug: String) {
        dirty.remove(slug)
        sessions[slug] = nil
        progressFloors[slug] = nil
        due[slug] = nil
    }

    /// The slugs of the cards that pass `test`.
    public func slugs(where test: (String, ActivitySession) -> Bool) -> [String] {
        sessions.compactMap { test($0.key, $0.value) ? $0.key : nil }
    }

    /// How many cards a run holds and has not ended: what the budget planner counts as on cards.
    public var cardsInUse: Int { sessions.values.filter { $0.owner != nil && $0.phase != .ended }.count }

    // MARK: Progress floors

    /// Keeps `progress` from moving back within an attempt: per step when the card is weighted
    /// (each step fills from 0), over the whole run when not.
    public mutating func applyProgressFloor(
        to desired: inout DesiredActivity, slug: String, changes: inout EngineChanges
    ) {
        guard let progress = desired.content["progress"]?.doubleValue, let step = desired.currentStep else { return }
        let weighted = desired.content["step_weights"] != nil
        let floorStep = weighted ? step : 0
        var value = progress
        if let floor = progressFloors[slug], floor.run == desired.run, floor.step == floorStep {
            value = max(value, floor.progress)
        }
        desired.content["progress"] = .number(value)
        let floor = ProgressFloor(run: desired.run, step: floorStep, progress: value)
        if progressFloors[slug] != floor {
            progressFloors[slug] = floor
            changes.slugs.insert(slug)
        }
    }

    /// The card passed to a new run: the old run's floor does not hold for it.
    public mutating func clearFloor(_ slug: String) {
        progressFloors[slug] = nil
    }

    // MARK: What to decide when

    /// The card on `slug` is to be decided on the next turn.
    public mutating func markDirty(_ slug: String) {
        dirty.insert(slug)
    }

    /// Puts cards back to be decided later (the dispatch gate or the pacer held them back).
    public mutating func markDirty<S: Sequence>(_ slugs: S) where S.Element == String {
        dirty.formUnion(slugs)
    }

    /// Records when the card on `slug` next needs deciding although nothing happens (nil: never).
    public mutating func setDue(_ slug: String, at time: UnixTime?) {
        due[slug] = time
    }

    /// When the card on `slug` next needs deciding, as recorded.
    public func dueTime(of slug: String) -> UnixTime? { due[slug] }

    /// The cards to decide at `now`: those something happened to, and those whose recorded time
    /// came. They leave both lists; deciding records their next time again.
    public mutating func takeDue(at now: UnixTime) -> [String] {
        var taken = dirty
        for (slug, time) in due where time <= now { taken.insert(slug) }
        dirty.removeAll()
        for slug in taken { due[slug] = nil }
        return taken.sorted()
    }

    /// The earliest recorded time after `now`. Walks the times in place: copying them into an
    /// array first cost 3 % of the daemon's CPU with some thousands of cards in flight.
    public func nextDue(after now: UnixTime) -> UnixTime? {
        var earliest: UnixTime?
        for time in due.values where time > now && earliest.map({ time < $0 }) ?? true { earliest = time }
        return earliest
    }

    // MARK: The push economy

    /// Where the month's updates stand now (from `GET /auth/me`, or a replay's figure).
    public mutating func use(budget: PushBudget?) {
        self.budget = budget
    }

    /// PushWard counted one more update: the planner's figure between two reads of `/auth/me`.
    public mutating func countUpdate() {
        budget?.used += 1
    }

    /// A run wanted a card at `now` (or `count` runs in that hour, read back from storage).
    public mutating func recordArrival(at now: UnixTime, count: Int = 1, changes: inout EngineChanges) {
        arrivals.record(at: now, count: count)
        changes.arrivalHours.insert(Int(now / 3_600))
    }

    /// Puts back an hour's count of new runs read from storage.
    public mutating func restoreArrivals(at hour: UnixTime, count: Int) {
        arrivals.record(at: hour, count: count)
    }

    /// Drops the arrivals older than the forecast looks.
    public mutating func pruneArrivals(at now: UnixTime) {
        arrivals.prune(at: now)
    }

    /// The budget planner's choice for `state`'s run about to take a card, or nil when it has no
    /// say: a level is configured, or the budget is unknown or unlimited. The level it picks is
    /// the one in force from then on.
    public mutating func budgetDecision(for state: RunState, settings: ActivitySettings) -> CardDecision? {
        guard settings.fidelity == .auto, let budget, budget.limit != nil else { return nil }
        let now = state.lastChangeAt
        arrivals.prune(at: now)
        let decision = BudgetPlanner.decide(
            run: state.key, budget: budget,
            arrivalsPerSecond: arrivals.rate(at: now, priorPerDay: BudgetPlanner.priorRunsPerDay),
            runsHoldingActivities: cardsInUse, inForce: levelInForce, at: now)
        if let level = decision.level { levelInForce = level }
        return decision
    }
}
