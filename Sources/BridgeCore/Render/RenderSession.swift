/// `render`: recorded deliveries through exactly the daemon's core, with a simulated clock driven by
/// the payloads' timestamps and a simulated PushWard that acknowledges everything.
///
/// Earlier runs in the input become history for later ones, as they would in the daemon.
public struct RenderSession: Sendable {
    /// One request the bridge would make, stamped with the simulated time.
    public struct Output: Sendable, Equatable {
        public var at: UnixTime
        public var planned: PlannedRequest
        /// The card's content once this request was acknowledged (nil between a POST and the first
        /// frame): what a phone showed from `at` on.
        public var shown: [String: JSONValue]?

        /// `{"at", "method", "path", "body"}` with sorted keys: one line of `render` output.
        public var json: JSONValue {
            [
                "at": .number(at), "method": .string(planned.request.method.rawValue),
                "path": .string(planned.request.path), "body": planned.request.body,
            ]
        }
    }

    public private(set) var engine: BridgeEngine
    /// Every run finished so far, as the daemon's store would hold it: the history provider the
    /// engine reads a workflow's runs from when its cache does not hold them.
    public private(set) var archive = RunHistory()
    public private(set) var clock: UnixTime = 0
    public private(set) var outcomes: [DeliveryOutcome] = []
    /// With `logsDecisions`, the reconciler's last word on each card at each moment the clock
    /// stopped, when it was not a send (a wait, a hold and its reason): what `explain` reads.
    public var logsDecisions = false
    public private(set) var decisions: [String: [UnixTime: ReconcileDecision]] = [:]
    /// Every widget request the bridge would make, in order, each acknowledged at once.
    public private(set) var widgetRequests: [(at: UnixTime, planned: PlannedWidgetRequest)] = []
    /// Where the clock stops once the input is exhausted: long enough for every end frame, grace
    /// period and throttle window, short of heartbeats (which would go on forever).
    private var horizon: UnixTime = 0

    public init(engine: BridgeEngine) {
        self.engine = engine
    }

    /// Simulates an account with a monthly allowance: the budget planner chooses each new run's
    /// level from it (with `fidelity: auto`), and every request acknowledged counts against it,
    /// as PushWard counts.
    public mutating func setBudget(_ budget: PushBudget?) {
        engine.budget = budget
    }

    /// Feeds one delivery at its payload's time: timers due before it fire first, then the
    /// requests it causes.
    public mutating func feed(_ event: WebhookEvent) -> [Output] {
        feed(event, at: PayloadTime.of(event) ?? clock)
    }

    /// Feeds one delivery as received at `time` (never before the clock).
    public mutating func feed(_ event: WebhookEvent, at received: UnixTime) -> [Output] {
        let time = max(clock, received)
        var output = runTimers(until: time)
        clock = time
        outcomes.append(engine.receive(event, at: time, history: archive))
        output += flush()
        let settings = engine.settings
        horizon = max(
            horizon,
            time + max(settings.completionGrace, settings.runnerWait) + settings.endDelay + settings.endDisplayTime
                + settings.minUpdateInterval + settings.coalesce + 1)
        return output
    }

    /// Lets the simulated time run out: everything due after the last delivery happens.
    public mutating func finish() -> [Output] {
        runTimers(until: horizon)
    }

    /// Lets the simulated time run to `limit`: the timers due on the way fire, then the cards are
    /// decided at `limit` itself.
    public mutating func run(until limit: UnixTime) -> [Output] {
        var output = runTimers(until: limit)
        clock = max(clock, limit)
        output += flush()
        return output
    }

    /// Takes the engine's changes as the daemon's store would: the runs that finished go to the
    /// archive, where the engine reads them back.
    private mutating func archiveChanges() {
        for summary in engine.takeChanges().history.values.sorted(by: { $0.key < $1.key }) { archive.record(summary) }
    }

    /// At most this many timers fire between two deliveries (64 hours of heartbeats at the default
    /// stale TTL, more than any recorded gap). The end frame, grace period and throttle windows come
    /// within a few; past them only heartbeats are left, and a payload timestamp centuries ahead had
    /// the simulation send every heartbeat in between: `render` hung on one delivery.
    public static let maximumTimersPerGap = 256

    private mutating func runTimers(until limit: UnixTime) -> [Output] {
        var output: [Output] = []
        var fired = 0
        while fired < Self.maximumTimersPerGap, let next = engine.nextWakeup(after: clock), next <= limit {
            fired += 1
            clock = next
            engine.advance(to: next)
            output += flush()
        }
        return output
    }

    /// Sends everything due now, each acknowledged at once, through the daemon's own dispatch
    /// turn (`BridgeEngine.dueRequests`): the answer makes the card due again, so turns go on
    /// until nothing is due.
    private mutating func flush() -> [Output] {
        var output: [Output] = []
        defer { archiveChanges() }
        // A reconciler that converges sends a handful of requests per slug at one instant; the cap
        // turns a bug that would not converge into visible output instead of a hang.
        for _ in 0..<64 {
            let clock = clock
            var decided: [(String, ReconcileDecision)] = []
            let due = engine.dueRequests(at: clock, inFlight: [], observe: { decided.append(($0, $1)) })
            if logsDecisions {
                for (slug, decision) in decided { decisions[slug, default: [:]][clock] = decision }
            }
            let widgets = engine.dueWidgetRequests(at: clock, inFlight: [])
            for planned in widgets {
                _ = engine.handleWidget(.success(status: 200), for: planned, at: clock)
                widgetRequests.append((clock, planned))
            }
            guard !due.isEmpty || !widgets.isEmpty else { break }
            for planned in due {
                engine.acknowledge(planned, at: clock)
                output.append(
                    Output(
                        at: clock, planned: planned, shown: engine.sessions[planned.request.slug]?.acknowledged?.content
                    ))
            }
        }
        return output
    }
}
