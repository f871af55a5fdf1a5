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
          github hooks (--repo OWNER/NAME | --org ORG) [--url URL] [--check] [--json]
                                           create or fix the GitHub webhook the bridge needs
          version                          print the version

        Run 'pushward-bridge <command> --help' for a command's options.
        """

    /// One line on stderr. Messages quote ids, paths and errors that can hold names from payloads
    /// or recordings, so the message is sanitized for the terminal (`TerminalText`).
    static func error(_ message: String) {
        FileHandle.standardError.write(Data("pushward-bridge: \(TerminalText.sanitized(message))\n".utf8))
    }

    /// A command's arguments, or the exit code when it is already done: `--help` printed its
    /// text (0), or the command line was wrong (64, with the message and the help on stderr).
    static func parse(_ arguments: [String], valued: Set<String>, flags: Set<String>, help: String)
        -> Result<ParsedArguments, ExitCode>
    {
        do throws(UsageError) {
            let parsed = try ParsedArguments(arguments, valued: valued, flags: flags.union(["help"]))
            guard !parsed.flags.contains("help") else {
                print(help)
                return .failure(.success)
            }
            return .success(parsed)
        } catch {
            return .failure(usage(error.description, help: help))
        }
    }

    /// Reads recorded deliveries (`render`, `replay`); a file it cannot read or parse is an error
    /// naming it (exit 1).
    static func loadRecordings(_ paths: [String]) -> Result<[RecordedDelivery], ExitCode> {
        var deliveries: [RecordedDelivery] = []
        for path in paths {
            guard let contents = FileManager.default.contents(atPath: path) else {
                error("\(path): cannot read the file")
                return .failure(.failure)
            }
            do throws(RecordedDelivery.LoadError) {
                deliveries += try RecordedDelivery.parse(fileName: path, contents: contents)
            } catch {
                self.error(error.description)
                return .failure(.failure)
            }
        }
        return .success(deliveries)
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
        case "github": return GitHubHooksCommand.dispatch(rest)
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
