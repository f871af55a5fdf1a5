import BridgeCore
import BridgeDaemon
import Foundation

/// What every command shares: messages on stderr, usage errors, configuration loading.
enum CLI {
    static let version = Daemon.version

    static let help = """
        Usage: pushward-bridge <command> [options]

        Commands:
          serve [--config PATH]            run the daemon
          check-config [--config PATH]     validate the configuration, print it with secrets masked
          runs list [--repo R] [--limit N] [--json]
                                           recent runs, their card, status and last push
          runs show RUN_ID [--json]        one run: jobs, steps, desired vs acknowledged, pushes
          explain RUN_ID | --delivery ID   why the card looks as it does, in sentences
          deliveries list [--limit N] [--json]
          deliveries show ID [--json]      what arrived and what became of it
          render FILE... [--config PATH]   print the PushWard requests recorded deliveries would make
          replay FILE... --url URL --secret S [--delay MS]
                                           sign and post recorded deliveries to a running bridge
          version                          print the version

        Run 'pushward-bridge <command> --help' for a command's options.
        """

    static func error(_ message: String) {
        FileHandle.standardError.write(Data("pushward-bridge: \(message)\n".utf8))
    }

    static func usage(_ message: String, help: String) -> ExitCode {
        error(message)
        FileHandle.standardError.write(Data("\n\(help)\n".utf8))
        return .usage
    }

    /// Reads and validates a configuration file; exit 78 with the key named on any problem.
    static func loadConfiguration(path: String) -> Result<BridgeConfiguration, ExitCode> {
        guard let data = FileManager.default.contents(atPath: path) else {
            error("\(path): cannot read the configuration file")
            return .failure(.configuration)
        }
        do throws(ConfigurationError) {
            return .success(try BridgeConfiguration(json: data))
        } catch {
            self.error("\(path): \(error.description)")
            return .failure(.configuration)
        }
    }

    /// The configuration `serve` would run with: file (or the default paths), environment, secrets.
    static func effectiveConfiguration(path: String?) -> Result<BridgeConfiguration, ExitCode> {
        do throws(ConfigurationError) {
            return .success(try ConfigurationLoader.load(path: path))
        } catch {
            self.error("configuration: \(error.description)")
            return .failure(.configuration)
        }
    }

    static func run(_ arguments: [String]) -> ExitCode {
        guard let command = arguments.first else { return usage("no command given", help: help) }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "render": return RenderCommand.run(rest)
        case "serve": return ServeCommand.run(rest)
        case "check-config": return CheckConfigCommand.run(rest)
        case "runs": return RunsCommand.run(rest)
        case "deliveries": return DeliveriesCommand.run(rest)
        case "replay": return ReplayCommand.run(rest)
        case "explain": return ExplainCommand.run(rest)
        case "version", "--version":
            print("pushward-bridge \(version)")
            return .success
        case "help", "--help", "-h":
            print(help)
            return .success
        default:
            return usage("unknown command \(command)", help: help)
        }
    }
}
