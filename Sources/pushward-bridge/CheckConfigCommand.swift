import BridgeCore
import BridgeDaemon
import Foundation

/// `check-config [--config PATH]`: validates configuration and secrets, prints the effective
/// settings with secrets masked.
enum CheckConfigCommand {
    static let help = """
        Usage: pushward-bridge check-config [--config PATH]

        Validates the configuration (file, PUSHWARD_* environment, *_FILE secrets and systemd
        credentials) and prints the effective settings as JSON, secrets masked. Exit 0 when `serve`
        would start, 78 with a message naming the key when not.
        """

    static func run(_ arguments: [String]) -> ExitCode {
        let parsed: ParsedArguments
        switch CLI.parse(arguments, valued: ["config"], flags: [], help: help) {
        case .success(let value): parsed = value
        case .failure(let code): return code
        }
        let configuration: BridgeConfiguration
        switch CLI.effectiveConfiguration(path: parsed.options["config"]) {
        case .success(let loaded): configuration = loaded
        case .failure(let code): return code
        }
        print(ConfigurationLoader.describe(configuration).canonicalString)
        let problems = ConfigurationLoader.servingProblems(configuration)
        for problem in problems { CLI.error("configuration: \(problem)") }
        if configuration.apiKey == nil { CLI.error("note: no PushWard API key, serve would run in dry-run mode") }
        return problems.isEmpty ? .success : .configuration
    }
}
