import BridgeCore
import BridgeDaemon
import Foundation

/// `serve [--config PATH]`: runs the daemon until SIGTERM/SIGINT.
enum ServeCommand {
    static let help = """
        Usage: pushward-bridge serve [--config PATH]

        Runs the daemon: verifies and records GitHub webhook deliveries on `listen` (POST /webhook,
        GET /healthz, GET /readyz) and keeps one PushWard Live Activity per run up to date. With no
        PushWard API key it runs in dry-run mode: everything is computed and recorded, nothing sent.

        The configuration is --config PATH, else ./config.json, else /etc/pushward-bridge/config.json;
        PUSHWARD_* environment variables override it. Stops cleanly on SIGTERM or SIGINT.

        Logs go to standard error: `time level message key=value …` lines when it is a terminal,
        one JSON object a line otherwise (journald); "log_format": "text" or "json" forces either.
        """

    static let spec = CommandSpec(name: "serve", valued: ["config"], help: help) { parsed throws(ExitCode) in
        try run(parsed)
    }

    static func run(_ parsed: ParsedArguments) throws(ExitCode) -> ExitCode {
        guard parsed.positionals.isEmpty else { return CLI.usage("serve takes no arguments", help: help) }
        let configuration = try CLI.effectiveConfiguration(path: parsed.options["config"]).get()
        let problems = ConfigurationLoader.servingProblems(configuration)
        guard problems.isEmpty else {
            for problem in problems { CLI.error("configuration: \(problem)") }
            return .configuration
        }
        let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
        let logger = Logger(
            label: "pushward-bridge", minimumLevel: level, format: LogFormat.chosen(configured: configuration.logFormat)
        )
        for warning in ConfigurationLoader.servingWarnings(configuration) {
            logger.warning("configuration warning", ["warning": .string(warning)])
        }
        // Before the start: a SIGTERM while it starts is kept, not lost (see StopSignals).
        let signals = StopSignals()
        let daemon: Daemon
        do {
            daemon = try Daemon.start(configuration: configuration, logger: logger)
        } catch {
            logger.error("could not start", ["error": .string("\(error)")])
            CLI.error("could not start: \(error)")
            return .failure
        }
        let path = parsed.options["config"]
        let reader: @Sendable () -> BridgeConfiguration? = {
            do throws(ConfigurationError) {
                return try ConfigurationLoader.load(path: path)
            } catch {
                CLI.error("configuration: \(error.description)")
                return nil
            }
        }
        return daemon.runUntilSignalled(signals, configurationSource: reader) == 0 ? .success : .failure
    }
}
