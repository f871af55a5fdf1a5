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
          help [--json]                    this text; --json: every command and the options it takes

        Run 'pushward-bridge <command> --help' for a command's options.
        """

    /// One line on stderr. Messages quote ids, paths and errors that can hold names from payloads
    /// or recordings, so the message is sanitized for the terminal (`TerminalText`).
    static func error(_ message: String) {
        FileHandle.standardError.write(Data("pushward-bridge: \(TerminalText.sanitized(message))\n".utf8))
    }

    /// A command's arguments parsed with the options its spec declares, or the exit code when it
    /// is already done: `--help` printed its text (0), or the command line was wrong (64, with the
    /// message and the help on stderr). The one parser of every command (`run` calls it).
    static func parse(_ arguments: [String], spec: CommandSpec) -> Result<ParsedArguments, ExitCode> {
        var arguments = arguments
        var subcommand: String?
        if spec.subcommandFirst {
            guard let word = arguments.first else {
                let words = spec.subcommands.joined(separator: ", ")
                return .failure(usage("\(spec.name) needs a subcommand: \(words)", help: spec.help))
            }
            if word == "--help" || word == "-h" {
                print(spec.help)
                return .failure(.success)
            }
            guard spec.subcommands.contains(word) else {
                return .failure(usage("unknown \(spec.name) subcommand \(word)", help: spec.help))
            }
            subcommand = word
            arguments.removeFirst()
        }
        do throws(UsageError) {
            var parsed = try ParsedArguments(arguments, valued: spec.valued, flags: spec.flags.union(["help"]))
            guard !parsed.flags.contains("help") else {
                print(spec.help)
                return .failure(.success)
            }
            parsed.subcommand = subcommand
            return .success(parsed)
        } catch {
            return .failure(usage(error.description, help: spec.help))
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

    /// Every command `run` dispatches to, in the order of the help text.
    static let commands: [CommandSpec] = [
        ServeCommand.spec, CheckConfigCommand.spec, RunsCommand.spec, ExplainCommand.spec, DeliveriesCommand.spec,
        RenderCommand.spec, ReplayCommand.spec, GitHubHooksCommand.spec, versionSpec, helpSpec,
    ]

    static let versionSpec = CommandSpec(name: "version", aliases: ["--version"], help: help) { runVersion($0) }

    static func runVersion(_ parsed: ParsedArguments) -> ExitCode {
        guard parsed.positionals.isEmpty else { return usage("version takes no arguments", help: help) }
        print("pushward-bridge \(version)")
        return .success
    }

    static let helpSpec = CommandSpec(name: "help", aliases: ["--help", "-h"], flags: ["json"], help: help) {
        runHelp($0)
    }

    /// `help [--json]`: the usage text, or every command with its options as one JSON object
    /// (`{"commands": [...]}`, see `CommandSpec.json`): what docs/cli.md is checked against, and
    /// what a shell completion can be made from.
    static func runHelp(_ parsed: ParsedArguments) -> ExitCode {
        guard parsed.positionals.isEmpty else { return usage("help takes no arguments", help: help) }
        guard parsed.flags.contains("json") else {
            print(help)
            return .success
        }
        print(JSONValue.object(["commands": .array(commands.map(\.json))]).canonicalString)
        return .success
    }

    static func run(_ arguments: [String]) -> ExitCode {
        guard let command = arguments.first else { return usage("no command given", help: help) }
        let rest = Array(arguments.dropFirst())
        guard let spec = commands.first(where: { $0.name == command || $0.aliases.contains(command) }) else {
            return usage("unknown command \(command)", help: help)
        }
        do throws(ExitCode) {
            return try spec.run(try parse(rest, spec: spec).get())
        } catch {
            return error
        }
    }
}
