import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

/// docs/cli.md (the source of `pushward-bridge(1)`) documents exactly the commands and options the
/// built binary's parser accepts, as `pushward-bridge help --json` prints them from the table the
/// parser works from.
@Suite("the command reference matches the parser", .timeLimit(.minutes(1)))
struct DocumentedCommandsTests {
    struct Command {
        var name: String
        var subcommands: [String]
        var aliases: [String]
        var options: Set<String>
    }

    /// Every command of the built binary with every option it accepts, `--help` included.
    static func accepted() throws -> [Command] {
        let result = try BridgeProcess.runToCompletion(["help", "--json"], in: try ScratchDirectory(), timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let commands = try #require(result.json?["commands"]?.arrayValue)
        return try commands.map { command in
            let names = { (key: String) in (command[key]?.arrayValue ?? []).compactMap(\.stringValue) }
            return Command(
                name: try #require(command["name"]?.stringValue), subcommands: names("subcommands"),
                aliases: names("aliases"), options: Set(names("options") + names("flags")))
        }
    }

    @Test("every command has a section under Commands, and every section is a command")
    func commandsMatch() throws {
        let accepted = try Self.accepted()
        let documented = try DocsPage("cli.md").sections(level: 3, under: "Commands").map(\.title)
        #expect(!accepted.isEmpty)
        #expect(Set(accepted.map(\.name)).subtracting(documented).sorted() == [], "commands missing from docs/cli.md")
        #expect(
            Set(documented).subtracting(accepted.map(\.name)).sorted() == [], "docs/cli.md sections the parser lacks")
    }

    @Test("each command's section names exactly the options its parser accepts, its aliases and its subcommands")
    func optionsMatch() throws {
        let page = try DocsPage("cli.md")
        let sections = Dictionary(
            page.sections(level: 3, under: "Commands").map { ($0.title, $0.lines) }, uniquingKeysWith: { $0 + $1 })
        // --help is taken by every command and documented once, in the description.
        #expect(DocsPage.options(in: page.lines).contains("--help"))
        for command in try Self.accepted() {
            let lines = try #require(sections[command.name], "no section for \(command.name)")
            let documented = DocsPage.options(in: lines)
            let accepted = command.options.subtracting(["--help"])
            #expect(
                accepted.subtracting(documented).sorted() == [],
                "\(command.name): accepted, missing from its section of docs/cli.md")
            #expect(
                documented.subtracting(command.options.union(command.aliases)).sorted() == [],
                "\(command.name): in its section of docs/cli.md, not accepted by the parser")
            for alias in command.aliases {
                #expect(
                    lines.contains { $0.contains(" \(alias)`") || $0.contains("`\(alias)`") },
                    "\(command.name): alias \(alias) is not described")
            }
            for subcommand in command.subcommands {
                #expect(
                    lines.contains { $0.contains("`\(command.name) \(subcommand)") },
                    "\(command.name) \(subcommand) is not described")
            }
        }
    }

    @Test("the option reader finds --name tokens, not dashes inside words or rules")
    func optionReader() {
        let found = DocsPage.options(in: ["`--config PATH`, --no-color; a--b, ---, --x2 and --Upper", "(--json)"])
        #expect(found == ["--config", "--no-color", "--x2", "--json"])
    }
}
