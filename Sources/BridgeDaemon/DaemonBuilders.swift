import BridgeCore
import BridgeStore
import Dispatch
import Foundation
import GitHubClient
import HTTPClientSupport
import PushWardClient
import WebhookServer

/// The steps `Daemon.init` is made of, each building one part from what the ones before built,
/// without binding, spawning or notifying anything (the services do that when they start).
extension Daemon {
    /// Opens (and migrates) the database; a migration on a large database can outlast systemd's
    /// start timeout, so systemd is told to wait while one runs.
    static func makeDatabase(_ location: DatabaseLocation, logger: Logger) throws -> BridgeDatabase {
        if case .sqlite(let databasePath) = location {
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: databasePath).deletingLastPathComponent(), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }
        let extender = StartTimeoutExtender(notifier: SystemdNotifier()) { status, seconds in
            logger.notice(
                "still applying a schema migration",
                ["migration.status": .string(status), "migration.seconds": .number(seconds.rounded())])
        }
        defer { extender.stop() }
        return try BridgeDatabase(location: location) { progress in
            if progress.elapsed == nil {
                extender.keepWaiting(
                    status: "applying schema migration \(progress.version) of \(progress.total): \(progress.name)")
            }
            var metadata: [String: JSONValue] = [
                "migration.name": .string(progress.name), "migration.version": .number(Double(progress.version)),
                "migration.total": .number(Double(progress.total)),
            ]
            if let elapsed = progress.elapsed {
                metadata["migration.seconds"] = .number((elapsed * 1_000).rounded() / 1_000)
                logger.notice("applied a schema migration", metadata)
            } else {
                logger.notice("applying a schema migration", metadata)
            }
        }
    }

    /// Checkpoints copy the WAL into the database file and sync it: on their own thread, so a
    /// delivery's commit never waits for one. None on PostgreSQL, which checkpoints by itself.
    static func makeCheckpointer(_ database: BridgeDatabase, logger: Logger) throws -> WALCheckpointer? {
        guard !database.isShared else { return nil }
        return try database.startCheckpointer { message in
            logger.warning("WAL checkpoint failed; the WAL grows until one succeeds", ["error": .string(message)])
        }
    }

    /// The service, on the engine the store holds. Several instances: the engine is read from the
    /// database when this instance takes the lead (one that follows holds none, so its start and
    /// memory cost nothing of the runs in flight), and deliveries are committed for the leader and
    /// answered on a connection of their own (`WaitingDeliveryCommitter`).
    static func makeService(
        _ database: sending BridgeDatabase, location: DatabaseLocation, configuration: BridgeConfiguration,
        logger: Logger,
        metrics: Metrics, wakeups: WakeupSignal, usageRefresh: WakeupSignal, fence: LeaderFence,
        snapshots: ServiceSnapshot.Board, instance: String, at now: UnixTime
    ) throws -> BridgeService {
        let loader = EngineLoader(configuration: configuration)
        let shared = database.isShared
        let engine = shared ? loader.empty() : try loader.load(from: database, at: now)
        snapshots.snapshot = ServiceSnapshot(engine: engine, inFlight: 0)
        let answers = shared ? try BridgeDatabase(location: location) : nil
        return BridgeService(
            database: database, engine: engine, configuration: configuration, logger: logger, metrics: metrics,
            wakeups: wakeups, usageRefresh: usageRefresh, fence: fence, snapshots: snapshots, answers: answers,
            instance: instance)
    }

    /// The GitHub client for `github.api`, each request counted and (at debug) logged.
    static func makeGitHubClient(_ api: GitHubAPISettings, metrics: Metrics, logger: Logger) throws -> GitHubAPIClient {
        try githubClient(api) { method, path, outcome in
            metrics.add("github_api_requests_total", labels: ["outcome": outcome])
            if logger.minimumLevel <= .debug {
                logger.debug(
                    "GitHub API request",
                    ["http.method": .string(method), "http.path": .string(path), "outcome": .string(outcome)])
            }
        }
    }

    /// The buttons' presses; nil without `actions` (which the configuration refuses without
    /// `github.api`).
    static func makeActionDesk(
        _ configuration: BridgeConfiguration, service: BridgeService, client: GitHubAPIClient?, logger: Logger,
        metrics: Metrics, instance: String, clock: @escaping @Sendable () -> UnixTime
    ) -> ActionDesk? {
        guard configuration.actions != nil, let client else { return nil }
        let presses = ActionPresses(service: service, logger: logger, metrics: metrics, instance: instance)
        return ActionDesk(presses: presses, client: client, logger: logger, clock: clock)
    }

    /// The webhook listener (and the buttons' presses, on the same port). `inherited`: the socket
    /// systemd passed, if any.
    static func makeWebhookListener(
        _ configuration: BridgeConfiguration, service: BridgeService, actions: ActionDesk?, metrics: Metrics,
        logger: Logger, inherited: Int32?, clock: @escaping @Sendable () -> UnixTime
    ) -> ListenerService {
        ListenerService("webhook listener") {
            var ingress = WebhookIngress(
                secrets: configuration.webhookSecrets, service: service, counters: metrics, logger: logger,
                clock: clock)
            ingress.actions = actions
            let handler = ingress
            var server = HTTPServer.Configuration(listen: configuration.listen)
            server.maxBodyBytes = configuration.maxBodyBytes
            server.unverifiedBodyBudget = configuration.maxUnverifiedBodyBytes
            server.onBudgetRefusal = { metrics.add("unverified_body_budget_refusals_total") }
            server.requestDeadline = configuration.requestDeadline
            server.perIPConnectionLimit = configuration.maxConnectionsPerAddress
            server.onDeadlineCut = { metrics.add("request_deadline_closes_total", Double($0)) }
            if let inherited { server.listenFileDescriptor = inherited }
            return try HTTPServer(configuration: server) { request, responder in
                handler.handle(request, respond: responder.respond)
            }
        }
    }

    /// The admin listener: `/metrics`, `/healthz`, the status page and the read-only API.
    static func makeAdminListener(_ configuration: BridgeConfiguration, status: ServiceStatus, metrics: Metrics)
        -> ListenerService
    {
        ListenerService("admin listener") {
            let admin = AdminRoutes(
                status: status, metrics: metrics, token: configuration.adminToken,
                databasePath: configuration.database, allowedHosts: configuration.adminHosts)
            var server = HTTPServer.Configuration(listen: configuration.adminListen)
            server.maxBodyBytes = 64 * 1024
            server.threadPoolSize = 2
            return try HTTPServer(configuration: server) { request in admin.handle(request) }
        }
    }

    /// PushWard: the transport a test gives, the real client with an API key, or the dry run.
    /// Several instances use a shorter timeout (`LeaderState.sharedRequestTimeout`).
    static func makeTransport(_ configuration: BridgeConfiguration, given: (any PushWardTransport)?, shared: Bool)
        -> any PushWardTransport
    {
        if let given { return given }
        guard let key = configuration.apiKey else { return DryRunTransport() }
        return HTTPTransport(
            client: PushWardClient(
                configuration: .init(
                    baseURL: configuration.pushwardURL, apiKey: key,
                    timeout: shared ? LeaderState.sharedRequestTimeout : 10, version: version)))
    }

    /// The store's service, first to start and last to stop: at start it marks the presses the
    /// last stop cut off (`instance`: only this instance's, when several share the database); at
    /// stop the final checkpoint leaves a small WAL behind.
    static func makeStore(
        service: BridgeService, instance: String?, checkpointer: WALCheckpointer?, logger: Logger,
        clock: @escaping @Sendable () -> UnixTime
    ) -> StepService {
        StepService(
            "store",
            start: {
                service.onQueue { service in
                    ActionPresses.interruptCutOffPresses(in: service, recordedBy: instance, logger: logger, at: clock())
                }
            },
            shutdown: {
                checkpointer?.stop()
                logger.notice("stopped", [:])
            })
    }

    /// The dispatcher's loop. It sleeps on `wakeups`, not on a cancellable sleep: woken to see the
    /// cancel. With `actions`, what it sends carries minted buttons, and a review asks GitHub for
    /// the environments a run waits on.
    static func makeDispatcher(
        _ configuration: BridgeConfiguration, service: BridgeService, transport: any PushWardTransport,
        fence: LeaderFence, client: GitHubAPIClient?, logger: Logger, metrics: Metrics,
        clock: @escaping @Sendable () -> UnixTime
    ) -> LoopService {
        var dispatcher = Dispatcher(service: service, transport: transport, fence: fence, logger: logger, clock: clock)
        if let client, configuration.sendsNotifications {
            dispatcher.annotations = FailureAnnotations(service: service, client: client, fence: fence, logger: logger)
        }
        if let actions = configuration.actions, let client {
            dispatcher.mint = ActionMint(service: service, actions: actions, logger: logger, metrics: metrics)
            dispatcher.pendingEnvironments = { run in
                try? await client.pendingDeployments(repository: run.repository, runID: run.runID, gate: fence.gate())
                    .map(\.environmentName)
            }
        }
        let dispatched = dispatcher
        return LoopService("dispatcher", logger: logger, wake: { service.wakeups.signal() }) { await dispatched.run() }
    }

    /// The background loops: the budget reader (when anything reads the budget), recovery's
    /// sweeps and lookups (with `github.api`), retention and the memory pass.
    static func makeLoops(
        _ configuration: BridgeConfiguration, service: BridgeService, transport: any PushWardTransport,
        usageRefresh: WakeupSignal, fence: LeaderFence, client: GitHubAPIClient?, recovery board: RecoveryBoard,
        readsBudget: Bool, logger: Logger, metrics: Metrics, clock: @escaping @Sendable () -> UnixTime
    ) -> [LoopService] {
        var loops: [LoopService] = []
        let plansBudget = configuration.activity.fidelity == .auto && configuration.pushwardBudget != .unlimited
        // Alerts and widgets read it too: a spent quota pauses them before a refused request.
        if plansBudget || configuration.sendsNotifications || !configuration.widgets.isEmpty, readsBudget {
            let reader = BudgetReader(
                service: service, transport: transport, refresh: usageRefresh, fence: fence, logger: logger,
                clock: clock)
            loops.append(
                LoopService("budget reader", logger: logger, wake: { usageRefresh.signal() }) { await reader.run() })
        }
        if let api = configuration.githubAPI, let client {
            let recovery = GitHubRecovery(
                client: FencedGitHub(client: client, fence: fence), service: service, settings: api, logger: logger,
                metrics: metrics, board: board, now: clock, webhookURL: configuration.publicURL.map { $0 + "/webhook" })
            if !api.hooks.isEmpty || configuration.publicURL != nil {
                loops.append(LoopService("recovery", logger: logger) { await recovery.sweepUntilCancelled() })
            }
            loops.append(LoopService("run lookups", logger: logger) { await recovery.lookUpQuietRunsUntilCancelled() })
        }
        loops.append(
            LoopService("retention", logger: logger) {
                // Not at once: a start (or restart) is when GitHub redeliveries crowd in, and
                // pruning shares the store's queue with them.
                try? await Task.sleep(for: .seconds(60))
                while !Task.isCancelled {
                    // One batch per call while work is left; the pause lets the ingest groups queued
                    // meanwhile go first, so a backlog (the first pass after an upgrade) never holds
                    // the store for long.
                    while !Task.isCancelled, await service.pruneRetention(at: clock()) {
                        try? await Task.sleep(for: .milliseconds(20))
                    }
                    try? await Task.sleep(for: .seconds(600))
                }
            })
        loops.append(
            LoopService("memory", logger: logger) {
                // Every half minute: a finished run leaves memory about a minute after its card is
                // done with it (`BridgeEngine.finishedRunGrace`), whatever the traffic.
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(30))
                    await service.forgetFinished(at: clock())
                }
            })
        return loops
    }

    /// systemd's readiness, once both listeners are bound, and the watchdog's keep-alives after it
    /// (the first message systemd gets is the readiness).
    static func makeReadiness(
        _ configuration: BridgeConfiguration, notifier: SystemdNotifier, webhook: ListenerService,
        admin: ListenerService, activated: Bool, dryRun: Bool, logger: Logger
    ) -> [any DaemonService] {
        var services: [any DaemonService] = [
            StepService(
                "systemd readiness",
                start: {
                    notifier.notify(
                        "READY=1\nSTATUS=listening on \(activated ? "the socket from systemd" : configuration.listen)")
                    logger.notice(
                        "listening for GitHub webhooks",
                        [
                            "http.listen": .string(activated ? "systemd socket (fd 3)" : configuration.listen),
                            "http.port": .number(Double(webhook.port)),
                            "admin.listen": .string(configuration.adminListen),
                            "admin.port": .number(Double(admin.port)),
                            "database": .string(DatabaseLocation.redacting(configuration.database)),
                            "pushward.dry_run": .bool(dryRun),
                        ])
                    if dryRun {
                        logger.warning(
                            "no PushWard API key: dry-run mode, everything is computed and recorded, nothing is sent",
                            ["pushward.url": .string(configuration.pushwardURL)])
                    }
                },
                shutdown: { notifier.notify("STOPPING=1") })
        ]
        if let interval = notifier.watchdogInterval {
            services.append(
                LoopService("watchdog", logger: logger) {
                    while !Task.isCancelled {
                        notifier.notify("WATCHDOG=1")
                        try? await Task.sleep(for: .seconds(interval))
                    }
                })
        }
        return services
    }
}
