import BridgeCore
import BridgeStore
import Foundation
import HTTPClientSupport

/// Sends what the core wants shown: asks the service for every request due, sends each through
/// the transport, records the answer, then sleeps until the next timer or the next delivery.
public struct Dispatcher: Sendable {
    public var service: BridgeService
    public var transport: any PushWardTransport
    public var logger: Logger
    public var clock: @Sendable () -> UnixTime
    /// The longest sleep: timers are re-read at least this often.
    public var maximumSleep: Double = 30
    /// The names of the environments a run waits on as GitHub lists them (`GET …/pending_deployments`),
    /// nil when GitHub could not say: asked before a review notification goes out whose waiting
    /// job no delivery named the environment of (GitHub's `waiting` delivery has no `deployment`),
    /// so its buttons answer one known environment. Nil without `actions`.
    public var pendingEnvironments: (@Sendable (RunKey) async -> [String]?)?
    /// Whether a leader-only request may go out now (`LeaderFence`).
    public var fence: LeaderFence
    /// Arms the buttons of what goes out (`actions`); nil without.
    public var mint: ActionMint?
    /// Quotes the failed job's error in a failure alert (`github.api`); nil without.
    public var annotations: FailureAnnotations?

    public init(
        service: BridgeService, transport: any PushWardTransport, fence: LeaderFence, mint: ActionMint? = nil,
        logger: Logger, clock: @escaping @Sendable () -> UnixTime = { Date().timeIntervalSince1970 }
    ) {
        self.service = service
        self.transport = transport
        self.fence = fence
        self.mint = mint
        self.logger = logger
        self.clock = clock
    }

    /// Runs until the task is cancelled, then lets the requests already out finish (the daemon's
    /// shutdown deadline bounds that), so an acknowledged request is always recorded.
    public func run() async {
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                let now = clock()
                // Which cards PushWard preempted (free to ask): read before planning, so none of
                // them is patched as if it were still showing.
                if await service.takePreemptedCheck(at: now),
                    let slugs = await gated({ await transport.activitySlugs(state: "preempted", gate: $0) }) ?? nil
                {
                    await service.observePreempted(slugs, at: clock())
                }
                for planned in await service.dueRequests(at: now) {
                    group.addTask { await send(planned) }
                }
                if service.settings.sendsWidgets {
                    for planned in await service.dueWidgetRequests(at: clock()) {
                        group.addTask { await send(planned) }
                    }
                }
                // Not even a hop onto the store's queue without an `alerts` section.
                if service.settings.sendsAlerts {
                    for alert in await service.dueAlerts(at: clock()) {
                        group.addTask { await send(alert) }
                    }
                }
                let next = await service.nextWakeup(after: clock())
                let sleep = min(maximumSleep, max(0.005, (next ?? now + maximumSleep) - clock()))
                await service.wakeups.wait(atMost: sleep)
            }
        }
    }

    /// Sends through `send` with this instance's gate (`LeaderFence`), asked before the request
    /// starts and again by the client just before it goes (as its body is handed to the
    /// connection): planned before a freeze (SIGSTOP, a stalled VM), a request must not go out
    /// after it once another instance may lead. Nil when the gate refused, at any point. On
    /// SQLite, whose one instance always leads, there is no gate to ask.
    private func gated<Answer>(_ send: (SendGate?) async -> Answer) async -> Answer? {
        guard let gate = fence.gate() else { return await send(nil) }
        guard gate.allows() else { return nil }
        let answer = await send(gate)
        return gate.refused ? nil : answer
    }

    private func send(_ planned: PlannedWidgetRequest) async {
        guard let answer = await gated({ await transport.send(planned.request, gate: $0) }) else {
            return await service.abandon(planned)
        }
        await service.completeWidget(planned, answer: answer, at: clock())
    }

    private func send(_ planned: AlertRecord) async {
        // The quote is part of what was sent (recorded with the answer); the tokens never are.
        var alert = planned
        if !transport.isDryRun, let annotations, fence.permits() { alert = await annotations.annotated(planned) }
        let stored = (try? JSONValue(parsing: Data(alert.body.utf8))) ?? .object([:])
        // Dry-run sends nothing, so no button needs a live token.
        var pending: [String]?
        if !transport.isDryRun, let lookup = pendingEnvironments, let mint, fence.permits(),
            await mint.reviewNeedsPendingDeployments(alert, body: stored)
        {
            pending = await lookup(alert.run)
        }
        var body = stored
        if !transport.isDryRun, let mint { body = await mint.armed(alert, body: stored, pending: pending, at: clock()) }
        guard let answer = await gated({ await transport.notify(body, gate: $0) }) else {
            return await service.abandon(alert)
        }
        await service.completeAlert(alert, answer: answer, dryRun: transport.isDryRun, at: clock())
    }

    private func send(_ planned: PlannedRequest) async {
        let started = DispatchTime.now().uptimeNanoseconds
        var request = planned.request
        if !transport.isDryRun, let mint { request = await mint.armed(planned, at: clock()) }
        guard let answer = await gated({ await transport.send(request, gate: $0) }) else {
            return await service.abandon(planned)
        }
        if !transport.isDryRun {
            service.metrics.observe(
                "pushward_request_latency_seconds", Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        }
        await service.complete(planned, answer: answer, dryRun: transport.isDryRun, at: clock())
    }
}
