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
/// Building is a list of `make…` steps: it opens (and migrates) the database and starts its
/// checkpointer, so a database that cannot be opened fails before any socket is bound, and writes
/// nothing: the store's service, first to start, marks the presses the last stop cut off, and
/// closes the store last.
public final class Daemon: @unchecked Sendable {
    /// The bridge's version, in `version` and the PushWard `User-Agent`.
    public static let version = "0.1.0"
    public private(set) var configuration: BridgeConfiguration
    public let logger: Logger
    public let counters = Metrics()
    public let service: BridgeService
    /// What `/metrics` and the status page read of the running daemon (`ServiceStatus`).
    public let status: ServiceStatus
    /// Signalled after a turn that gave the dispatcher something to do.
    public let wakeups = WakeupSignal()
    /// Signalled when PushWard said the quota is spent or the account is full: the usage is read
    /// again at once.
    let usageRefresh = WakeupSignal()
    /// What recovery from GitHub last did (`GitHubRecovery`), for the gauges and the status page.
    public let recovery = RecoveryBoard()
    /// Whether a leader-only request may go out now (`LeaderFence`).
    let fence: LeaderFence
    /// What the service last published, for `status`.
    private let snapshots = ServiceSnapshot.Board(ServiceSnapshot(engine: BridgeEngine(), inFlight: 0))
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
        let counters = counters
        let database = try Self.makeDatabase(location, logger: logger)
        let checkpointer = try Self.makeCheckpointer(database, logger: logger)
        let (shared, databasePath) = (database.isShared, database.path)
        let instance = Self.instanceName(listen: configuration.listen)
        let leadership = shared ? LeadershipBoard() : nil
        fence = LeaderFence(board: leadership)
        service = try Self.makeService(
            database, location: location, configuration: configuration, logger: logger, metrics: counters,
            wakeups: wakeups, usageRefresh: usageRefresh, fence: fence, snapshots: snapshots, instance: instance,
            at: clock())
        status = ServiceStatus(
            service: service, snapshots: snapshots, recovery: recovery, leadership: leadership,
            checkpointer: checkpointer, databasePath: databasePath)
        let githubClient = try configuration.githubAPI.map {
            try Self.makeGitHubClient($0, metrics: counters, logger: logger)
        }
        let activated = SocketActivation.descriptors()
        webhookListener = Self.makeWebhookListener(
            configuration, service: service,
            actions: Self.makeActionDesk(
                configuration, service: service, client: githubClient, logger: logger, metrics: counters,
                instance: instance, clock: clock),
            metrics: counters, logger: logger, inherited: activated.first, clock: clock)
        adminListener = Self.makeAdminListener(configuration, status: status, metrics: counters)
        let dryRun = configuration.apiKey == nil && transport == nil
        let sender = Self.makeTransport(configuration, given: transport, shared: shared)
        var services: [any DaemonService] = [
            Self.makeStore(
                service: service, instance: shared ? instance : nil, checkpointer: checkpointer,
                logger: logger, clock: clock)
        ]
        if case .postgresql(let uri) = location, let leadership {
            // Stops after the dispatcher and before the store: the lead is given up once nothing
            // is being sent, so a follower takes over at its next poll.
            services.append(
                LeadershipService(
                    uri: uri, holder: "\(ProcessInfo.processInfo.hostName):\(getpid())",
                    settings: LeaderLease.Settings(), service: service, board: leadership, logger: logger))
        }
        services.append(
            Self.makeDispatcher(
                configuration, service: service, transport: sender, fence: fence, client: githubClient,
                logger: logger, metrics: counters, clock: clock))
        services += Self.makeLoops(
            configuration, service: service, transport: sender, usageRefresh: usageRefresh, fence: fence,
            client: githubClient, recovery: recovery, readsBudget: !dryRun, logger: logger, metrics: counters,
            clock: clock)
        services += [webhookListener, adminListener]
        services += Self.makeReadiness(
            configuration, notifier: notifier, webhook: webhookListener, admin: adminListener,
            activated: !activated.isEmpty, dryRun: dryRun, logger: logger)
        group = ServiceGroup(services, logger: logger)
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
