import BridgeCore
import Foundation

/// Sends what the core wants shown: asks the service for every request due, sends each through
/// the transport, records the answer, then sleeps until the next timer or the next delivery.
public struct Dispatcher: Sendable {
    public var service: BridgeService
    public var transport: any PushWardTransport
    public var logger: Logger
    public var clock: @Sendable () -> UnixTime
    /// The longest sleep: timers are re-read at least this often.
    public var maximumSleep: Double = 30

    public init(
        service: BridgeService, transport: any PushWardTransport, logger: Logger,
        clock: @escaping @Sendable () -> UnixTime = { Date().timeIntervalSince1970 }
    ) {
        self.service = service
        self.transport = transport
        self.logger = logger
        self.clock = clock
    }

    /// Runs until the task is cancelled.
    public func run() async {
        while !Task.isCancelled {
            await runOnce()
            let now = clock()
            let next = await service.nextWakeup(after: now)
            let sleep = min(maximumSleep, max(0.005, (next ?? now + maximumSleep) - now))
            await service.wakeups.wait(atMost: sleep)
        }
    }

    /// Sends everything due now (and what that makes due at once, such as a create's first frame).
    public func runOnce() async {
        for _ in 0..<64 {
            let due = await service.dueRequests(at: clock())
            guard !due.isEmpty else { return }
            await withTaskGroup(of: Void.self) { group in
                for planned in due {
                    group.addTask { await send(planned) }
                }
            }
        }
    }

    private func send(_ planned: PlannedRequest) async {
        let result = await transport.send(planned.request)
        await service.record(
            planned, status: result.status, outcome: result.outcome, detail: result.detail, at: clock())
        logger.debug(
            "sent a request to PushWard",
            [
                "activity.slug": .string(planned.request.slug), "push.kind": .string(planned.kind.rawValue),
                "push.status": result.status.map { .number(Double($0)) } ?? .null,
                "push.outcome": .string(result.outcome),
            ])
    }
}
