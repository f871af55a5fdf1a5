import BridgeCore
import BridgeStore
import Dispatch
import Foundation
import PushWardClient
import WebhookServer

/// `serve`: opens the database, restores the core's state, listens for webhooks, dispatches, and
/// stops in order on SIGTERM/SIGINT (stop intake, let in-flight work finish, close).
public final class Daemon: @unchecked Sendable {
    /// The bridge's version, in `version` and the PushWard `User-Agent`.
    public static let version = "0.1.0"
    public private(set) var configuration: BridgeConfiguration
    public let logger: Logger
    public let counters = Metrics()
    public let service: BridgeService
    private let checkpointer: WALCheckpointer
    private let server: HTTPServer
    private let adminServer: HTTPServer
    private var tasks: [Task<Void, Never>] = []
    private let notifier = SystemdNotifier()

    /// Everything that can fail at start fails here, with a message naming what to fix.
    public init(configuration: BridgeConfiguration, logger: Logger, transport: (any PushWardTransport)? = nil) throws {
        self.configuration = configuration
        self.logger = logger
        let databaseURL = URL(fileURLWithPath: configuration.database)
        try FileManager.default.createDirectory(
            at: databaseURL.deletingLastPathComponent(), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let database = try BridgeDatabase(path: configuration.database) { progress in
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
        checkpointer = try database.startCheckpointer { message in
            logger.warning("WAL checkpoint failed; the WAL grows until one succeeds", ["error": .string(message)])
        }
        let now = Date().timeIntervalSince1970
        let engine = try database.loadEngine(settings: configuration.activity, filter: configuration.filter, at: now)
        service = BridgeService(
            database: database, engine: engine, configuration: configuration, logger: logger, metrics: counters,
            checkpointer: checkpointer)
        let ingress = WebhookIngress(
            secrets: configuration.webhookSecrets, service: service, counters: counters, logger: logger)
        var serverConfiguration = HTTPServer.Configuration(listen: configuration.listen)
        serverConfiguration.maxBodyBytes = configuration.maxBodyBytes
        serverConfiguration.unverifiedBodyBudget = configuration.maxUnverifiedBodyBytes
        let counters = counters
        serverConfiguration.onBudgetRefusal = { counters.add("unverified_body_budget_refusals_total") }
        let activated = SocketActivation.descriptors()
        if let inherited = activated.first { serverConfiguration.listenFileDescriptor = inherited }
        server = try HTTPServer(configuration: serverConfiguration) { request, responder in
            ingress.handle(request, respond: responder.respond)
        }
        let admin = AdminRoutes(
            service: service, metrics: counters, token: configuration.adminToken, databasePath: configuration.database,
            allowedHosts: configuration.adminHosts)
        var adminConfiguration = HTTPServer.Configuration(listen: configuration.adminListen)
        adminConfiguration.maxBodyBytes = 64 * 1024
        adminConfiguration.threadPoolSize = 2
        adminServer = try HTTPServer(configuration: adminConfiguration) { request in admin.handle(request) }
        let dryRun = configuration.apiKey == nil && transport == nil
        let chosenTransport: any PushWardTransport =
            transport
            ?? configuration.apiKey.map { key in
                HTTPTransport(
                    client: PushWardClient(
                        configuration: .init(baseURL: configuration.pushwardURL, apiKey: key, version: Daemon.version)))
            } ?? DryRunTransport()
        let dispatcher = Dispatcher(service: service, transport: chosenTransport, logger: logger)
        tasks.append(Task { await dispatcher.run() })
        if configuration.activity.fidelity == .auto, configuration.pushwardBudget != .unlimited, !dryRun {
            tasks.append(
                Task { [service] in await Self.readBudget(service: service, transport: chosenTransport, logger: logger)
                })
        }
        let service = service
        tasks.append(
            Task {
                // Not at once: a start (or restart) is when GitHub redeliveries crowd in, and
                // pruning shares the store's queue with them.
                try? await Task.sleep(for: .seconds(60))
                while !Task.isCancelled {
                    // One batch per call while work is left; the pause lets the ingest groups queued
                    // meanwhile go first, so a backlog (the first pass after an upgrade) never holds
                    // the store for long.
                    while !Task.isCancelled, await service.pruneRetention(at: Date().timeIntervalSince1970) {
                        try? await Task.sleep(for: .milliseconds(20))
                    }
                    try? await Task.sleep(for: .seconds(600))
                }
            })
        tasks.append(
            Task {
                // Every half minute: a finished run leaves memory about a minute after its card is
                // done with it (`BridgeEngine.finishedRunGrace`), whatever the traffic.
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(30))
                    await service.forgetFinished(at: Date().timeIntervalSince1970)
                }
            })
        notifier.notify(
            "READY=1\nSTATUS=listening on \(activated.isEmpty ? configuration.listen : "the socket from systemd")")
        // Keep-alives only after READY=1: the first message systemd gets is the readiness.
        if let interval = notifier.watchdogInterval {
            let notifier = notifier
            tasks.append(
                Task {
                    while !Task.isCancelled {
                        notifier.notify("WATCHDOG=1")
                        try? await Task.sleep(for: .seconds(interval))
                    }
                })
        }
        logger.notice(
            "listening for GitHub webhooks",
            [
                "http.listen": .string(activated.isEmpty ? configuration.listen : "systemd socket (fd 3)"),
                "http.port": .number(Double(server.port)), "admin.listen": .string(configuration.adminListen),
                "admin.port": .number(Double(adminServer.port)),
                "database": .string(configuration.database), "pushward.dry_run": .bool(dryRun),
            ])
        if dryRun {
            logger.warning(
                "no PushWard API key: dry-run mode, everything is computed and recorded, nothing is sent",
                ["pushward.url": .string(configuration.pushwardURL)])
        }
    }

    /// How often the budget is read again: `GET /auth/me` costs no quota, and 15 minutes keeps the
    /// planner's figures close to PushWard's between the counts the daemon keeps itself.
    public static let budgetInterval: Double = 15 * 60

    /// Reads the month's usage at start, every `budgetInterval` and whenever PushWard said the
    /// quota is spent, and hands it to the planner. A failed read leaves the last known budget.
    static func readBudget(service: BridgeService, transport: any PushWardTransport, logger: Logger) async {
        while !Task.isCancelled {
            switch await transport.usage() {
            case .usage(let usage):
                await service.updateBudget(usage, at: Date().timeIntervalSince1970)
            case .problem(let problem):
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
    public var port: Int { server.port }
    /// The bound admin port.
    public var adminPort: Int { adminServer.port }

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

    /// Stops intake, then the background work, within `deadline` seconds. Blocks: call it from a
    /// thread outside Swift's cooperative pool (the signal handler's), or use `shutdown`.
    public func stop(deadline: Double = 10) {
        notifier.notify("STOPPING=1")
        server.stop()
        adminServer.stop()
        for task in tasks { task.cancel() }
        // The dispatcher sleeps on this signal, not on a cancellable sleep: wake it to see the cancel.
        service.wakeups.signal()
        // So does the budget reader, between two reads of /auth/me.
        service.usageRefresh.signal()
        let finished = DispatchSemaphore(value: 0)
        let tasks = tasks
        Task {
            for task in tasks { await task.value }
            finished.signal()
        }
        if finished.wait(timeout: .now() + deadline) == .timedOut {
            logger.warning("background work did not finish before the shutdown deadline", [:])
        }
        // Last: a final checkpoint leaves a small WAL behind.
        checkpointer.stop()
        logger.notice("stopped", [:])
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

    /// Runs until SIGTERM or SIGINT, then stops; returns the process exit code. SIGHUP calls
    /// `reload` with whatever `configurationSource` reads (nil: the file is broken, keep going).
    public func runUntilSignalled(configurationSource: (@Sendable () -> BridgeConfiguration?)? = nil) -> Int32 {
        let stopRequested = DispatchSemaphore(value: 0)
        var sources: [DispatchSourceSignal] = []
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { stopRequested.signal() }
            source.resume()
            sources.append(source)
        }
        signal(SIGHUP, SIG_IGN)
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
        sources.append(hangup)
        stopRequested.wait()
        logger.notice("shutting down", [:])
        stop()
        sources.forEach { $0.cancel() }
        return 0
    }
}
