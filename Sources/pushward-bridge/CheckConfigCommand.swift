import BridgeCore
import BridgeDaemon
import BridgeStore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `check-config [--config PATH] [--database PATH]`: validates configuration and secrets, prints
/// the effective settings with secrets masked, and where the month's push budget stands.
enum CheckConfigCommand {
    static let help = """
        Usage: pushward-bridge check-config [--config PATH] [--database PATH]

        Validates the configuration (file, PUSHWARD_* environment, *_FILE secrets and systemd
        credentials) and prints the effective settings as JSON, secrets masked (indented on a
        terminal, one line otherwise). Exit 0 when `serve` would start, 78 with a message naming
        the key when not.

        With an API key and pushward.budget not unlimited, it asks PushWard once (GET /auth/me, 5 s
        at most) and adds a `budget` object: updates used, the limit, when the count resets, the
        runs forecast before then and the level the planner would give a run now, and why. The
        forecast uses the runs the database (--database, else the configured one, read-only)
        recorded over 14 days, or the planner's prior without one. A failed read is reported in
        that object; the configuration itself is still valid.
        """

    static let spec = CommandSpec(name: "check-config", valued: ["config", "database"], help: help) {
        parsed throws(ExitCode) in try run(parsed)
    }

    static func run(_ parsed: ParsedArguments) throws(ExitCode) -> ExitCode {
        let configuration = try CLI.effectiveConfiguration(path: parsed.options["config"]).get()
        var described = ConfigurationLoader.describe(configuration)
        if case .object(var members) = described {
            members["budget"] = budget(configuration, database: parsed.options["database"])
            if configuration.routing.isEnabled,
                let refused = targetsRefused(configuration, database: parsed.options["database"])
            {
                CLI.error(
                    "routing: PushWard refused a routing target at \(GitHubTimestamp.format(refused)) (a personal "
                        + "key cannot route); the daemon sends cards and alerts to everyone the key reaches. Configure "
                        + "an organisation key: with another key the daemon tries targets again.")
            }
            described = .object(members)
        }
        // Indented for a person at a terminal; one line for a script or a pipe.
        print(isatty(STDOUT_FILENO) == 1 ? described.indentedString() : described.canonicalString)
        let problems = ConfigurationLoader.servingProblems(configuration)
        for problem in problems { CLI.error("configuration: \(problem)") }
        for warning in ConfigurationLoader.servingWarnings(configuration) { CLI.error("warning: \(warning)") }
        if configuration.apiKey == nil { CLI.error("note: no PushWard API key, serve would run in dry-run mode") }
        return problems.isEmpty ? .success : .configuration
    }

    /// The `budget` object (see `BudgetCheck.report`): PushWard is asked only when the answer can
    /// matter, with a key and a budget the planner uses.
    static func budget(_ configuration: BridgeConfiguration, database: String?) -> JSONValue {
        let now = Date().timeIntervalSince1970
        guard configuration.apiKey != nil, configuration.pushwardBudget != .unlimited else {
            return BudgetCheck.report(configuration, answer: nil, forecast: .prior, at: now)
        }
        let answer = blocking { await BudgetCheck.read(configuration, version: CLI.version) } ?? nil
        return BudgetCheck.report(
            configuration, answer: answer, forecast: forecast(configuration, database: database, at: now), at: now)
    }

    /// The runs the database saw over the last 14 days, read-only; the prior when there is no
    /// database yet or it cannot be read (check-config never fails for the forecast).
    static func forecast(_ configuration: BridgeConfiguration, database: String?, at now: UnixTime)
        -> BudgetCheck.Forecast
    {
        let path = database ?? configuration.database
        guard FileManager.default.fileExists(atPath: path),
            let opened = try? BridgeDatabase(path: path, readOnly: true),
            let engine = try? opened.loadEngine(
                settings: configuration.activity, filter: configuration.filter, at: now)
        else { return .prior }
        let onCards = engine.sessions.values.filter { $0.owner != nil && $0.phase != .ended }.count
        return BudgetCheck.Forecast(
            arrivals: engine.arrivals, runsHoldingActivities: onCards,
            source: "the runs recorded in \(path) over the last 14 days, with the prior")
    }

    /// When the daemon learned that PushWard refuses targets, from the database (read-only).
    static func targetsRefused(_ configuration: BridgeConfiguration, database: String?) -> UnixTime? {
        let path = database ?? configuration.database
        guard FileManager.default.fileExists(atPath: path),
            let opened = try? BridgeDatabase(path: path, readOnly: true),
            let engine = try? opened.loadEngine(
                settings: configuration.activity, filter: configuration.filter, at: Date().timeIntervalSince1970)
        else { return nil }
        guard engine.gate.targetsRefusedKey == configuration.apiKey.map(BridgeEngine.fingerprint(ofKey:)) else {
            return nil
        }
        return engine.gate.targetsRefusedAt
    }

    /// Runs `body` to completion from synchronous code: the CLI has nothing else to do meanwhile.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T? {
        let semaphore = DispatchSemaphore(value: 0)
        let box = Box<T>()
        Task {
            box.value = await body()
            semaphore.signal()
        }
        semaphore.wait()
        return box.value
    }

    private final class Box<T>: @unchecked Sendable {
        var value: T?
    }
}
