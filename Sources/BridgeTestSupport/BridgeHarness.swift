import BridgeCore

/// Drives the core the way `render` does, against the in-memory PushWard that enforces the
/// contract: every request is validated and applied as the server would, so a test sees both what
/// was sent and what a phone would show.
public struct BridgeHarness: Sendable {
    public private(set) var session: RenderSession
    public private(set) var server = InMemoryPushWard()
    public private(set) var sent: [RenderSession.Output] = []

    public init(settings: ActivitySettings = .pushingEveryChange, filter: DeliveryFilter = DeliveryFilter()) {
        session = RenderSession(engine: BridgeEngine(settings: settings, filter: filter))
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

    /// See `RenderSession.setBudget`.
    public mutating func setBudget(_ budget: PushBudget?) {
        session.setBudget(budget)
    }

    public mutating func finish() {
        record(session.finish())
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
