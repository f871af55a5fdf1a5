import BridgeCore

/// Drives the engine as the daemon's dispatcher does, with every request answered by the
/// in-memory PushWard as the real one would answer it: a refusal (`422` with the field named, a
/// `404` for a deleted activity, a `409` at the account's cap) goes back to the engine as that
/// problem, where `BridgeHarness` acknowledges everything. For tests of what the bridge does with
/// PushWard's answers.
public struct AnsweringHarness: Sendable {
    public private(set) var engine: BridgeEngine
    public var server = InMemoryPushWard()
    public private(set) var clock: UnixTime
    /// Every request with the status it got, in order.
    public private(set) var sent: [(at: UnixTime, planned: PlannedRequest, status: Int)] = []

    public init(
        configuration: EngineConfiguration = EngineConfiguration(settings: .pushingEveryChange), start: UnixTime
    ) {
        engine = BridgeEngine(configuration: configuration)
        clock = start
    }

    /// Applies `event` at `time` (not before the clock), then sends what is due.
    public mutating func feed(_ event: WebhookEvent, at time: UnixTime) {
        clock = max(clock, time)
        _ = engine.receive(event, at: clock)
        pump()
    }

    /// Lets the clock run to `limit`, firing each timer on the way (end frames, ends, retries).
    public mutating func run(until limit: UnixTime) {
        var fired = 0
        while fired < 1_024, let next = engine.nextWakeup(after: clock), next <= limit {
            fired += 1
            clock = max(clock, next)
            pump()
        }
        clock = max(clock, limit)
        pump()
    }

    private mutating func pump() {
        for _ in 0..<64 {
            let due = engine.dueRequests(at: clock, inFlight: [])
            guard !due.isEmpty else { return }
            for planned in due {
                let status = server.handle(planned.request, at: clock)
                sent.append((clock, planned, status))
                let answer: PushWardAnswer
                if (200..<300).contains(status) {
                    answer = .success(status: status)
                } else {
                    let entry = server.log.last
                    answer = .problem(
                        PushWardProblem(
                            status: status, code: entry?.code,
                            detail: entry.map { $0.violations.map(\.description).joined(separator: "; ") }))
                }
                _ = engine.handle(answer, for: planned, at: clock, jitter: 0)
            }
        }
    }
}
