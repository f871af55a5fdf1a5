import BridgeCore

/// One command of the CLI: the word that selects it, the words it takes next (`runs list`), the
/// options its parser accepts, and what runs it.
///
/// `CLI.commands` lists every command; `CLI.run` dispatches through that list, each command's
/// parser reads its options from its own spec, and `help --json` prints the list. So the list that
/// docs/cli.md is checked against is the one the parser works from, not a copy kept beside it.
struct CommandSpec: Sendable {
    var name: String
    /// The words that may follow `name` (`list`, `show`); empty for a command that takes none.
    var subcommands: [String] = []
    /// Other words that select the command (`--version` for `version`).
    var aliases: [String] = []
    /// Options that take a value: `--config PATH`.
    var valued: Set<String> = []
    /// Options that take none: `--json`. Every command also takes `--help` (`CLI.parse`).
    var flags: Set<String> = []
    var run: @Sendable ([String]) -> ExitCode

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
