import BridgeCore

/// One command of the CLI: the word that selects it, the words it takes next (`runs list`), the
/// options it accepts, its help, and what runs it once its command line is parsed.
///
/// `CLI.commands` lists every command; `CLI.run` finds the command in that list, parses its
/// arguments with `CLI.parse` against the options declared here (the one parser, so `--help`,
/// `--name=value` and the usage errors behave alike in every command), and hands `run` the result;
/// `help --json` prints the list. So the list that docs/cli.md is checked against is the one the
/// parser works from, not a copy kept beside it.
struct CommandSpec: Sendable {
    var name: String
    /// The words that may follow `name` (`list`, `show`); empty for a command that takes none.
    var subcommands: [String] = []
    /// The subcommand must come first, before any option, and is taken off before the options are
    /// parsed (`github hooks --repo R`); otherwise it is the first positional (`runs --json list`).
    var subcommandFirst = false
    /// Other words that select the command (`--version` for `version`).
    var aliases: [String] = []
    /// Options that take a value: `--config PATH`.
    var valued: Set<String> = []
    /// Options that take none: `--json`. Every command also takes `--help` (`CLI.parse`).
    var flags: Set<String> = []
    /// What `--help` prints, and what follows a usage error on stderr.
    var help: String
    /// The command itself, given its parsed command line (`subcommand` set when `subcommandFirst`).
    /// It throws the exit code when a step it took (reading the configuration, the recordings)
    /// already said what went wrong on stderr: `try CLI.effectiveConfiguration(…).get()`.
    var run: @Sendable (ParsedArguments) throws(ExitCode) -> ExitCode

    /// `{"name", "aliases", "subcommands", "options", "flags"}`, options and flags with their `--`, `--help`
    /// included: what the parser accepts after `name`.
    var json: JSONValue {
        .object([
            "name": .string(name),
            "subcommands": .array(subcommands.map { .string($0) }),
            "aliases": .array(aliases.map { .string($0) }),
            "options": .array(valued.sorted().map { .string("--" + $0) }),
            "flags": .array(flags.union(["help"]).sorted().map { .string("--" + $0) }),
        ])
    }
}
