import BridgeCore
import BridgeStore
import Dispatch
import Foundation
import GitHubClient
import HTTPClientSupport
import PushWardClient
import WebhookServer

/// `serve`: the store, the dispatcher, the listeners and the background loops as one ordered
/// `ServiceGroup`: built here without binding, spawning or notifying anything, started in order
/// by `start`, stopped in reverse by `stop` (SIGTERM/SIGINT through `runUntilSignalled`).
///
/// Building opens (and migrates) the database and starts its checkpointer, so a database that
/// cannot be opened fails before any socket is bound; the store's service closes it last.
public final class Daemon: @unchecked Sendable {
    /// The bridge's version, in `version` and the PushWard `User-Agent`.
    public static let version = "0.1.0"
    public private(set) var configuration: BridgeConfiguration
    public let logger: Logger
    public let counters = Metrics()
    public let service: BridgeService
    private let webhookListener: ListenerService
    private let adminListener: ListenerService
    private let group: ServiceGroup
    private let notifier = SystemdNotifier()

    /// Builds and starts a daemon: what `serve` and the tests run. `clock`: see `init`.
    public static func start(
        configuration: BridgeConfiguration, logger: Logger, transport: (any PushWardTransport)? = nil,
        clock: @escaping @Sendable () -> UnixTime = { Date().timeIntervalSince1970 }
    ) throws -> Daemon {
        let daemon = try Daemon(configuration: configuration, logger: logger, transport: transport, clock: clock)
        try daemon.start()
        return daemon
    }

    /// Everything that can fail at start fails here or in `start`, with a message naming what to fix.
    ///
    /// `clock`: the time the running daemon's decisions are taken at (when a delivery was received,
    /// when the dispatcher plans, paces and records, when a button is pressed, when the budget is
    /// read). The wall clock; a test of a time window (the request pacer's) passes one it can hold
    /// still, so what falls inside the window does not depend on how fast the machine is. Leases,
    /// claims and timeouts keep the wall clock.
    public init(
        configuration: BridgeConfiguration, logger: Logger, transport: (any PushWardTransport)? = nil,
        clock: @escaping @Sendable () -> UnixTime = { Date().timeIntervalSince1970 }
    ) throws {
        self.configuration = configuration
        self.logger = logger
        let location = try configuration.databaseLocation()
        if case .sqlite(let databasePath) = location {
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: databasePath).deletingLastPathComponent(), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }
        // A migration on a large database can outlast systemd's start timeout: it is told to wait.
        let extender = StartTimeoutExtender(notifier: SystemdNotifier()) { status, seconds in
            logger.notice(
                "still applying a schema migration",
                ["migration.status": .string(status), "migration.seconds": .number(seconds.rounded())])
        }
        defer { extender.stop() }
        let database = try BridgeDatabase(location: location) { progress in
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
        // Checkpoints copy the WAL into the database file and sync it: on their own thread, so a
        // delivery's commit never waits for one.
        let shared = database.isShared
        // PostgreSQL checkpoints by itself.
        let checkpointer =
            database.isShared
            ? nil
            : try database.startCheckpointer { message in
                logger.warning("WAL checkpoint failed; the WAL grows until one succeeds", ["error": .string(message)])
            }
        let now = clock()
        // Several instances: the engine is read from the database when this instance takes the
        // lead; one that follows holds none, so its start and memory cost nothing of the runs in
        // flight, and its gauges say nothing of runs it does not apply.
        let loader = EngineLoader(configuration: configuration)
        let engine = shared ? loader.empty() : try loader.load(from: database, at: now)
        let instance = Self.instanceName(listen: configuration.listen)
        Self.interruptCutOffPresses(database, recordedBy: shared ? instance : nil, logger: logger, at: now)
        // Several instances: deliveries are committed for the leader and answered on a connection
        // of their own, so no answer waits behind the leader's applying (`WaitingDeliveryCommitter`).
        let answers = shared ? try BridgeDatabase(location: location) : nil
        let service = BridgeService(
            database: database, engine: engine, configuration: configuration, logger: logger, metrics: counters,
            checkpointer: checkpointer, answers: answers, instance: instance)
        self.service = service
        let counters = counters
        let activated = SocketActivation.descriptors()
        let githubClient = try configuration.githubAPI.map { api in
            try Self.githubClient(api) { method, path, outcome in
                counters.add("github_api_requests_total", labels: ["outcome": outcome])
                if logger.minimumLevel <= .debug {
                    logger.debug(
                        "GitHub API request",
                        ["http.method": .string(method), "http.path": .string(path), "outcome": .string(outcome)])
                }
            }
        }
        // `actions` needs `github.api` (the configuration refuses one without the other).
        let actionDesk =
            configuration.actions == nil
            ? nil
            : githubClient.map { client in
                ActionDesk(service: service, client: client, logger: logger, clock: clock)
            }
        webhookListener = ListenerService("webhook listener") {
            var configured = WebhookIngress(
                secrets: configuration.webhookSecrets, service: service, counters: counters, logger: logger,
                clock: clock)
            configured.actions = actionDesk
            let ingress = configured
            var serverConfiguration = HTTPServer.Configuration(listen: configuration.listen)
            serverConfiguration.maxBodyBytes = configuration.maxBodyBytes
            serverConfiguration.unverifiedBodyBudget = configuration.maxUnverifiedBodyBytes
            serverConfiguration.onBudgetRefusal = { counters.add("unverified_body_budget_refusals_total") }
            serverConfiguration.requestDeadline = configuration.requestDeadline
            serverConfiguration.perIPConnectionLimit = configuration.maxConnectionsPerAddress
            serverConfiguration.onDeadlineCut = { counters.add("request_deadline_closes_total", Double($0)) }
            if let inherited = activated.first { serverConfiguration.listenFileDescriptor = inherited }
            return try HTTPServer(configuration: serverConfiguration) { request, responder in
                ingress.handle(request, respond: responder.respond)
            }
        }
        adminListener = ListenerService("admin listener") {
            let admin = AdminRoutes(
                service: service, metrics: counters, token: configuration.adminToken,
                databasePath: configuration.database, allowedHosts: configuration.adminHosts)
            var adminConfiguration = HTTPServer.Configuration(listen: configuration.adminListen)
            adminConfiguration.maxBodyBytes = 64 * 1024
            adminConfiguration.threadPoolSize = 2
            return try HTTPServer(configuration: adminConfiguration) { request in admin.handle(request) }
        }
        let dryRun = configuration.apiKey == nil && transport == nil
        let chosenTransport: any PushWardTransport =
            transport
            ?? configuration.apiKey.map { key in
                HTTPTransport(
                    client: PushWardClient(
                        configuration: .init(
                            baseURL: configuration.pushwardURL, apiKey: key,
                            timeout: shared ? BridgeService.sharedRequestTimeout : 10,
                            version: Daemon.version)))
            } ?? DryRunTransport()
        var dispatcher = Dispatcher(service: service, transport: chosenTransport, logger: logger, clock: clock)
        if configuration.actions != nil, let client = githubClient {
            let fence = service.leaderFence
            dispatcher.pendingEnvironments = { run in
                try? await client.pendingDeployments(repository: run.repository, runID: run.runID, gate: fence.gate())
                    .map(\.environmentName)
            }
        }
        let dispatched = dispatcher
        var services: [any DaemonService] = [
            // Last to stop: the final checkpoint leaves a small WAL behind.
            StepService(
                "store",
                shutdown: {
                    checkpointer?.stop()
                    logger.notice("stopped", [:])
                }),
            // The dispatcher sleeps on `wakeups`, not on a cancellable sleep: woken to see the cancel.
            LoopService("dispatcher", logger: logger, wake: { service.wakeups.signal() }) { await dispatched.run() },
        ]
        if case .postgresql(let uri) = location {
            // Stops after the dispatcher and before the store: the lead is given up once nothing
            // is being sent, so a follower takes over at its next poll.
            services.insert(
                LeadershipService(
                    uri: uri, holder: "\(ProcessInfo.processInfo.hostName):\(getpid())",
                    settings: LeaderLease.Settings(), service: service, logger: logger),
                at: 1)
        }
        let plansBudget = configuration.activity.fidelity == .auto && configuration.pushwardBudget != .unlimited
        // Alerts and widgets read it too: a spent quota pauses them before a refused request.
        if plansBudget || configuration.sendsNotifications || !configuration.widgets.isEmpty, !dryRun {
            // So does the budget reader, between two reads of /auth/me.
            services.append(
                LoopService("budget reader", logger: logger, wake: { service.usageRefresh.signal() }) {
                    await Self.readBudget(service: service, transport: chosenTransport, logger: logger, clock: clock)
                })
        }
        if let api = configuration.githubAPI, let client = githubClient {
            let recovery = GitHubRecovery(
                client: FencedGitHub(client: client, fence: service.leaderFence), service: service, settings: api,
                logger: logger, metrics: counters,
                board: service.recovery, now: clock,
                webhookURL: configuration.publicURL.map { $0 + "/webhook" })
            if !api.hooks.isEmpty || configuration.publicURL != nil {
                services.append(LoopService("recovery", logger: logger) { await recovery.sweepUntilCancelled() })
            }
            services.append(
                LoopService("run lookups", logger: logger) { await recovery.lookUpQuietRunsUntilCancelled() })
        }
        services.append(
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
        services.append(
            LoopService("memory", logger: logger) {
                // Every half minute: a finished run leaves memory about a minute after its card is
                // done with it (`BridgeEngine.finishedRunGrace`), whatever the traffic.
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(30))
                    await service.forgetFinished(at: clock())
                }
            })
        services += [webhookListener, adminListener]
        let notifier = notifier
        let webhookListener = webhookListener
        let adminListener = adminListener
        services.append(
            StepService(
                "systemd readiness",
                start: {
                    notifier.notify(
                        "READY=1\nSTATUS=listening on \(activated.isEmpty ? configuration.listen : "the socket from systemd")"
                    )
                    logger.notice(
                        "listening for GitHub webhooks",
                        [
                            "http.listen": .string(activated.isEmpty ? configuration.listen : "systemd socket (fd 3)"),
                            "http.port": .number(Double(webhookListener.port)),
                            "admin.listen": .string(configuration.adminListen),
                            "admin.port": .number(Double(adminListener.port)),
                            "database": .string(DatabaseLocation.redacting(configuration.database)),
                            "pushward.dry_run": .bool(dryRun),
                        ])
                    if dryRun {
                        logger.warning(
                            "no PushWard API key: dry-run mode, everything is computed and recorded, nothing is sent",
                            ["pushward.url": .string(configuration.pushwardURL)])
                    }
                },
                shutdown: { notifier.notify("STOPPING=1") }))
        // Keep-alives only after READY=1: the first message systemd gets is the readiness.
        if let interval = notifier.watchdogInterval {
            services.append(
                LoopService("watchdog", logger: logger) {
                    while !Task.isCancelled {
                        notifier.notify("WATCHDOG=1")
                        try? await Task.sleep(for: .seconds(interval))
                    }
                })
        }
        self.group = ServiceGroup(services, logger: logger)
    }

    /// The GitHub client for `github.api`. An App's key is read here: a file that is not one
    /// stops the start, naming the file.
    static func githubClient(_ api: GitHubAPISettings, observer: GitHubAPIClient.Observer? = nil) throws
        -> GitHubAPIClient
    {
        let credential: GitHubAPIClient.Credential
        switch api.credential {
        case .token(let token)?:
            credential = .token(token)
        case .app(let id, let file)?:
            credential = .app(id: id, key: try ConfigurationLoader.appKey(file: file))
        case nil:
            throw ConfigurationError(key: "github.api", problem: "no credential to call GitHub with")
        }
        return GitHubAPIClient(baseURL: api.url, credential: credential, version: version, observer: observer)
    }

    /// Presses a stop cut off before GitHub answered: recorded `interrupted` and said once, never
    /// asked again (GitHub may have done them). `instance`: only the presses this instance
    /// recorded (several share a PostgreSQL database, and another's may be under way); nil: all
    /// (SQLite, one instance).
    static func interruptCutOffPresses(
        _ database: BridgeDatabase, recordedBy instance: String? = nil, logger: Logger, at now: UnixTime
    ) {
        do {
            for record in try database.write({ try $0.interruptRequestedActions(recordedBy: instance, at: now) }) {
                logger.warning(
                    "an action asked from a phone was cut off by a stop before GitHub answered; it is not asked again",
                    [
                        "action": .string(record.kind.rawValue), "run": .string(record.run.description),
                        "action.person": .string(record.person),
                    ])
            }
        } catch {
            logger.error("could not read the presses cut off by the last stop", ["error": .string("\(error)")])
        }
    }

    /// The name an instance records its presses under: the host and the webhook listener's
    /// address as configured, the same at every start of the same instance and different for two
    /// instances on one host (they cannot listen on one address). An instance on any free port
    /// (`:0`) is a new one at each start: its name adds the process id and a random part.
    public static func instanceName(
        host: String = ProcessInfo.processInfo.hostName, listen: String, pid: Int32 = getpid()
    ) -> String {
        guard listen.hasSuffix(":0") else { return "\(host) \(listen)" }
        return "\(host) \(listen) pid \(pid) \(UUID().uuidString.prefix(8).lowercased())"
    }

    /// Starts the services in order (see `ServiceGroup.start`).
    public func start() throws {
        try group.start()
    }

    /// The services in the order they start; they stop in reverse.
    public var serviceNames: [String] { group.names }

    /// How often the budget is read again: `GET /auth/me` costs no quota, and 15 minutes keeps the
    /// planner's figures close to PushWard's between the counts the daemon keeps itself.
    public static let budgetInterval: Double = 15 * 60

    /// Reads the month's usage at start (or on taking the lead), every `budgetInterval` and
    /// whenever PushWard said the quota is spent, and hands it to the planner. A failed read
    /// leaves the last known budget.
    static func readBudget(
        service: BridgeService, transport: any PushWardTransport, logger: Logger,
        clock: @escaping @Sendable () -> UnixTime = { Date().timeIntervalSince1970 }
    ) async {
        while !Task.isCancelled {
            // A read is a request like any other to PushWard's per-minute limit: the pacer's.
            if service.pacesRequests {
                let (admitted, retryAt) = await service.admitRead(at: clock())
                guard admitted else {
                    try? await Task.sleep(for: .seconds(max(0.05, retryAt - clock())))
                    continue
                }
            }
            // Only the leader reads (its planner is the one that sends); a follower asks again
            // within a second of taking the lead.
            let gate = service.leaderFence.gate()
            let answer = await transport.usage(gate: gate)
            if gate?.refused == true {
                await service.usageRefresh.wait(atMost: GitHubRecovery.followerPoll)
                continue
            }
            switch answer {
            case .usage(let usage):
                await service.updateBudget(usage, at: clock())
            case .problem(let problem):
                if problem.status == 429, problem.code != "quota.exceeded" {
                    await service.noteRateLimited(retryAfter: problem.retryAfter, at: clock())
                }
                logger.warning(
                    "could not read the PushWard budget (GET /auth/me); planning with the last known one",
                    ["push.status": .number(Double(problem.status)), "push.problem": .string(problem.summary)])
            case .unreadable(let status, let error):
                logger.warning(
                    "could not read the PushWard budget (GET /auth/me); planning with the last known one",
                    ["push.status": .number(Double(status)), "push.problem": .string("\(error)")])
            case .noAnswer(let reason):
                logger.warning(
                    "could not read the PushWard budget (GET /auth/me); planning with the last known one",
                    ["push.problem": .string(reason)])
            }
            await service.usageRefresh.wait(atMost: budgetInterval)
        }
    }

    /// The bound webhook port (useful when `listen` asked for port 0).
    public var port: Int { webhookListener.port }
    /// The bound admin port.
    public var adminPort: Int { adminListener.port }

    /// `stop` for async callers: it runs on a thread of its own, since `stop` waits for tasks that
    /// need Swift's small cooperative pool, which a caller from that pool would be blocking.
    public func shutdown(deadline: Double = 10) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                self.stop(deadline: deadline)
                continuation.resume()
            }
        }
    }

    /// Stops the services in reverse order (systemd hears `STOPPING=1`, the listeners stop taking
    /// requests, the loops finish, the store checkpoints last), all within `deadline` seconds.
    /// Blocks: call it from a thread outside Swift's cooperative pool (the signal handler's), or
    /// use `shutdown`.
    public func stop(deadline: Double = 10) {
        group.shutdown(deadline: .now() + deadline)
    }

    /// Applies what can change safely while running (filters, log level) and says what it
    /// reloaded; a change to anything else is named as needing a restart.
    public func reload(_ new: BridgeConfiguration) {
        var reloaded: [String] = []
        if new.filter != configuration.filter {
            let service = service
            let filter = new.filter
            WebhookIngress.blocking { await service.updateFilter(filter) }
            reloaded.append("filters")
        }
        if let level = Logger.Level(rawValue: new.logLevel), level != logger.minimumLevel {
            logger.minimumLevel = level
            reloaded.append("log_level")
        }
        var needsRestart: [String] = []
        if new.listen != configuration.listen { needsRestart.append("listen") }
        if new.adminListen != configuration.adminListen { needsRestart.append("admin_listen") }
        if new.adminHosts != configuration.adminHosts || new.adminToken != configuration.adminToken {
            needsRestart.append("admin_hosts/admin_token")
        }
        if new.maxBodyBytes != configuration.maxBodyBytes
            || new.maxUnverifiedBodyBytes != configuration.maxUnverifiedBodyBytes
        {
            needsRestart.append("body limits")
        }
        if new.database != configuration.database { needsRestart.append("database") }
        // The format is chosen with the logger, at start; the URL is what recovery looks for then.
        if new.logFormat != configuration.logFormat { needsRestart.append("log_format") }
        if new.publicURL != configuration.publicURL { needsRestart.append("public_url") }
        if new.webhookSecrets != configuration.webhookSecrets { needsRestart.append("github.webhook_secrets") }
        if new.apiKey != configuration.apiKey || new.pushwardURL != configuration.pushwardURL {
            needsRestart.append("pushward")
        }
        if new.activity != configuration.activity { needsRestart.append("activity settings") }
        if new.retention != configuration.retention || new.payloadRetention != configuration.payloadRetention {
            needsRestart.append("retention")
        }
        logger.notice(
            "reloaded the configuration",
            [
                "reloaded": .array(reloaded.map { .string($0) }),
                "needs_restart": .array(needsRestart.map { .string($0) }),
            ])
        configuration.filter = new.filter
        configuration.logLevel = new.logLevel
    }

    /// Runs until `signals` hears SIGTERM or SIGINT (perhaps one that came during the start), then
    /// stops; returns the process exit code. SIGHUP calls `reload` with whatever
    /// `configurationSource` reads (nil: the file is broken, keep going).
    public func runUntilSignalled(
        _ signals: StopSignals, configurationSource: (@Sendable () -> BridgeConfiguration?)? = nil
    ) -> Int32 {
        let hangup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        hangup.setEventHandler { [self] in
            // Logs go to stderr (journald), which needs no reopening; the configuration does.
            guard let new = configurationSource?() else {
                logger.error("SIGHUP: the configuration could not be read; keeping the running one", [:])
                return
            }
            reload(new)
        }
        hangup.resume()
        signals.wait()
        logger.notice("shutting down", [:])
        stop()
        hangup.cancel()
        signals.cancel()
        return 0
    }
}
