import BridgeCore

/// Drives the core the way `render` does, against the in-memory PushWard that enforces the
/// contract: every request is validated and applied as the server would, so a test sees both what
/// was sent and what a phone would show.
public struct BridgeHarness: Sendable {
    public private(set) var session: RenderSession
    public private(set) var server = InMemoryPushWard()
    public private(set) var sent: [RenderSession.Output] = []

    public init(
        settings: ActivitySettings = .pushingEveryChange, filter: DeliveryFilter = DeliveryFilter(),
        widgets: [WidgetSettings] = []
    ) {
        session = RenderSession(
            engine: BridgeEngine(
                configuration: EngineConfiguration(settings: settings, filter: filter, widgets: widgets)))
    }

    /// What is wrong with the widget requests sent so far, each checked as the fake PushWard does
    /// at the simulated time it was sent, against the widget as PushWard would hold it then.
    public var widgetViolations: [(request: PushWardRequest, violations: [ContractViolation])] {
        var held: [String: [String: JSONValue]] = [:]
        var found: [(PushWardRequest, [ContractViolation])] = []
        for (at, planned) in session.widgetRequests {
            let request = planned.request
            var violations: [ContractViolation]
            if request.method == .post {
                violations = WidgetContract.postViolations(request.body)
                held[request.slug] = request.body["content"]?.objectValue
            } else {
                let stored = held[request.slug] ?? [:]
                violations = WidgetContract.patchViolations(request.body, stored: stored)
                if let patch = request.body["content"] {
                    held[request.slug] = MergePatch.apply(patch, to: .object(stored)).objectValue
                }
            }
            let content = held[request.slug] ?? [:]
            violations =
                violations.filter { !$0.field.hasPrefix("content.") }
                + WidgetContract.contentViolations(content, at: at).map {
                    ContractViolation(field: "content." + $0.field, rule: $0.rule)
                }
            if !violations.isEmpty { found.append((request, violations)) }
        }
        return found
    }

    /// Feeds deliveries in the given order and lets the clock run out after the last.
    public mutating func play(_ events: [WebhookEvent]) {
        for event in events { record(session.feed(event)) }
        record(session.finish())
    }

    /// Feeds one delivery without letting the clock run on.
    public mutating func feed(_ event: WebhookEvent) {
        record(session.feed(event))
    }

    /// Feeds one delivery as received at `time` rather than at its payload's time (see
    /// `RenderSession.feed(_:at:)`): how a test sets the pace deliveries arrive at.
    public mutating func feed(_ event: WebhookEvent, at time: UnixTime) {
        record(session.feed(event, at: time))
    }

    /// See `RenderSession.setBudget`.
    public mutating func setBudget(_ budget: PushBudget?) {
        session.setBudget(budget)
    }

    public mutating func finish() {
        record(session.finish())
    }

    /// Lets the simulated time run to `limit`, firing the timers on the way (`RenderSession.run(until:)`):
    /// how a test waits with no delivery coming.
    public mutating func run(until limit: UnixTime) {
        record(session.run(until: limit))
    }

    private mutating func record(_ outputs: [RenderSession.Output]) {
        for output in outputs {
            _ = server.handle(output.planned.request, at: output.at)
            sent.append(output)
        }
    }

    public var engine: BridgeEngine { session.engine }

    /// Every contract violation any request caused; tests expect none.
    public var violations: [ContractViolation] { server.violations }

    /// The PATCH bodies' `content`, in order.
    public var patchContents: [[String: JSONValue]] {
        sent.filter { $0.planned.request.method == .patch }.compactMap {
            $0.planned.request.body["content"]?.objectValue
        }
    }

    /// What the server holds for the only (or the given) activity.
    public func stored(_ slug: String? = nil) -> StoredActivity? {
        if let slug { return server.activities[slug] }
        return server.activities.values.first
    }
}
