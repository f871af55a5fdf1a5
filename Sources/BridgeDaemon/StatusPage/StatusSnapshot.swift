import BridgeCore
import BridgeStore
import Foundation

/// Everything the status page shows, read from the store in one go, so `StatusPage` stays a pure
/// function of plain values (and its tests need no database).
public struct StatusSnapshot: Sendable {
    /// A steps-template content and whether the activity was ended, which the phone draws complete.
    public struct Card: Sendable, Equatable {
        public var content: [String: JSONValue]
        public var isEnded: Bool

        public init(content: [String: JSONValue], isEnded: Bool) {
            self.content = content
            self.isEnded = isEnded
        }

        public var layout: CardLayout { CardLayout(content: content, isEnded: isEnded) }

        /// The content without the live window's members: the desired content carries the window
        /// as an estimate that becomes `end_date` only when sent, so these never match verbatim.
        var withoutWindow: [String: JSONValue] {
            content.filter { !["live_progress", "duration", "start_date", "end_date"].contains($0.key) }
        }

        /// Whether the two would be drawn alike, live window aside.
        public func looksLike(_ other: Card) -> Bool {
            isEnded == other.isEnded && withoutWindow == other.withoutWindow
        }
    }

    /// One run attempt as the page shows it: its line of the run list (the same row `runs list`
    /// and `/api/runs` read, whose members it answers to directly) and what the page draws beside it.
    @dynamicMemberLookup
    public struct Run: Sendable {
        public var listing: BridgeDatabase.RunListing
        /// The run's page on GitHub, from the run state.
        public var runURL: String
        /// What phones show: the acknowledged content while the attempt owns the activity, else
        /// the content its own acknowledged requests left (replayed), nil when none went out.
        public var shown: Card?
        /// What the core wants shown, while the attempt owns the activity.
        public var desired: Card?
        /// The activity's last PushWard problem, while the attempt owns it.
        public var lastProblem: String?
        public var lastProblemAt: UnixTime?
        /// Newest first.
        public var requests: [RequestRecord]
        /// Newest first.
        public var deliveries: [DeliveryRecord]
        /// The level the push budget gave the run, and why; nil when the run predates the planner.
        public var cardDecision: CardDecision?
        /// The attempt's alerts (failure, fixed, waiting) and what became of them.
        public var alerts: [AlertRecord]
        /// Who the card reaches (`routing`); nil: everyone the key reaches.
        public var target: ActivityTarget?
        /// Whether the run had one of its person's ongoing cards, a summary entry, or was preempted.
        public var placement: CardPlacement?
        /// The run's commit comes from a fork: its `owner/name`, as the payload spelt it (the page
        /// escapes it); nil for the repository's own runs and those not known yet.
        public var fork: String?
        /// The job the card said waits for a runner, with the run's state to tell whether it
        /// still does; nil when no job of the attempt waited past `runner_wait`.
        public var runnerWait: (wait: RunnerWait, state: RunState)?

        public init(
            listing: BridgeDatabase.RunListing, runURL: String, shown: Card?, desired: Card?, lastProblem: String?,
            lastProblemAt: UnixTime?, requests: [RequestRecord], deliveries: [DeliveryRecord],
            cardDecision: CardDecision? = nil, alerts: [AlertRecord] = [], target: ActivityTarget? = nil
        ) {
            self.listing = listing
            self.runURL = runURL
            self.shown = shown
            self.desired = desired
            self.lastProblem = lastProblem
            self.lastProblemAt = lastProblemAt
            self.requests = requests
            self.deliveries = deliveries
            self.cardDecision = cardDecision
            self.alerts = alerts
            self.target = target
        }

        public subscript<Value>(dynamicMember member: WritableKeyPath<BridgeDatabase.RunListing, Value>) -> Value {
            get { listing[keyPath: member] }
            set { listing[keyPath: member] = newValue }
        }

        public subscript<Value>(dynamicMember member: KeyPath<BridgeDatabase.RunListing, Value>) -> Value {
            listing[keyPath: member]
        }

        /// Still changing: running, or its card not yet ended. The page refreshes while any is.
        public var isActive: Bool {
            listing.status != "completed" || listing.holdsLiveActivity
        }

        /// The run's own page ("View run on GitHub"): a failed run's card opens its failing job
        /// instead (`FailureSummary`), one click below this.
        public var gitHubURL: String { runURL }
    }

    public var runs: [Run]
    /// When the snapshot was read: what ETAs and "ago" count from.
    public var takenAt: UnixTime
    /// The month chart's bars: updates PushWard acknowledged per UTC day of the budget's period.
    public var pushDays: [BudgetChart.Day]
    /// The planner's decisions during the period, oldest first, for the chart's level markers.
    public var decisions: [BudgetChart.Decision]
    /// What a maintainer must act on, said above the runs (a refused routing target).
    public var notices: [String] = []
    /// What recovery from GitHub last did; nil without `github.api`, and on an instance that
    /// follows (the leader sweeps).
    public var recovery: RecoveryBoard.Standing?
    /// Several instances on PostgreSQL: whether this one leads, and who does; nil on SQLite.
    public var leadership: Leadership?
    /// The newest buttons pressed on phones (`actions`), newest first.
    public var actions: [ActionRecord] = []
    /// Every home-screen widget's state (`widgets`), by slug.
    public var widgets: [WidgetSession] = []

    public init(
        runs: [Run], takenAt: UnixTime, pushDays: [BudgetChart.Day] = [], decisions: [BudgetChart.Decision] = []
    ) {
        self.runs = runs
        self.takenAt = takenAt
        self.pushDays = pushDays
        self.decisions = decisions
    }

    /// Where the instance that drew the page stands among several on one database.
    public struct Leadership: Sendable, Equatable {
        /// Whether the instance that drew the page leads (applies, sends, sweeps).
        public var leads: Bool
        /// The leadership row: who took the lead last, and its last heartbeat; nil before any did.
        public var leader: LeaderRecord?

        public init(leads: Bool, leader: LeaderRecord?) {
            self.leads = leads
            self.leader = leader
        }
    }

    public var active: [Run] { runs.filter(\.isActive) }
    public var recent: [Run] { runs.filter { !$0.isActive } }

    /// Reads the `limit` most recent runs (those still going first) with their cards, requests
    /// and deliveries, and the month chart's figures for the period `budget` counts (its reset
    /// decides where the period starts; nil: the last 30 days).
    public static func read(
        from database: BridgeDatabase, limit: Int = 20, at now: UnixTime, budget: PushBudget? = nil
    ) throws -> StatusSnapshot {
        var runs: [Run] = []
        for listing in try database.listRuns(limit: limit) {
            let key = listing.key
            let stored = try database.storedRun(key)
            let activity = try database.session(slug: listing.slug)
            let pushes = try database.requests(for: key)
            var shown: Card?
            var desired: Card?
            var session: ActivitySession?
            if listing.ownsActivity, let owned = activity?.stored.session {
                session = owned
                let ended = owned.acknowledged?.state == "ended"
                shown = activity?.acknowledged?.objectValue.map { Card(content: $0, isEnded: ended) }
                desired = activity?.stored.desired?["content"]?.objectValue.map {
                    Card(content: $0, isEnded: owned.phase == .ended)
                }
            } else {
                shown = replayed(pushes)
            }
            runs.append(
                Run(
                    listing: listing,
                    runURL: stored?.state.runURL
                        ?? "https://github.com/\(PercentEncoding.path(key.repository))/actions/runs/\(key.runID)",
                    shown: shown, desired: desired, lastProblem: session?.lastProblem,
                    lastProblemAt: session?.lastProblemAt, requests: pushes.reversed(),
                    deliveries: try database.listDeliveries(run: key, limit: 200),
                    cardDecision: stored?.state.cardDecision,
                    alerts: try database.alerts(repository: key.repository, runID: key.runID).filter { $0.run == key },
                    target: session?.identity.target))
            runs[runs.count - 1].placement = stored?.state.placement
            runs[runs.count - 1].fork = stored?.state.origin.forkName
            runs[runs.count - 1].runnerWait = stored.flatMap { stored in
                stored.state.runnerWait.map { ($0, stored.state) }
            }
        }
        let period = BudgetChart.Period.of(resetsAt: budget?.resetsAt, now: now)
        let days = try database.acknowledgedRequestsPerDay(since: period.start).map {
            BudgetChart.Day(start: $0.day, updates: $0.count)
        }
        // A level name this build does not know is no change it can draw.
        let decisions = try database.cardDecisions(since: period.start).compactMap { decision in
            decision.level == nil
                ? BudgetChart.Decision(at: decision.at, level: nil)
                : Fidelity(rawValue: decision.level ?? "").map { BudgetChart.Decision(at: decision.at, level: $0) }
        }
        var snapshot = StatusSnapshot(runs: runs, takenAt: now, pushDays: days, decisions: decisions)
        snapshot.actions = try database.recentActions(limit: actionLimit)
        snapshot.widgets = try database.widgets()
        return snapshot
    }

    /// How many presses the page lists: a day's worth for a team, one index read.
    public static let actionLimit = 10

    /// The card as this run's own acknowledged requests left it. A run that lost its card to a
    /// newer one still deserves a drawing; its first frame set every field, so its requests alone
    /// rebuild what the phones showed.
    public static func replayed(_ pushes: [RequestRecord]) -> Card? {
        var activity: StoredActivity?
        for push in pushes where push.outcome == "acknowledged" || push.outcome == "dry-run" {
            guard let body = try? JSONValue(parsing: Data(push.body.utf8)) else { continue }
            if push.method == "POST" {
                activity = PushWardActivityModel.create(body, existing: activity)
            } else if push.method == "PATCH" {
                activity = PushWardActivityModel.applyPatch(
                    body, to: activity ?? StoredActivity(name: "", priority: 0), at: push.sentAt)
            }
        }
        guard let activity, !activity.content.isEmpty else { return nil }
        return Card(content: activity.content, isEnded: activity.state == "ended")
    }
}
