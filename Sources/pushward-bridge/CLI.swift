import BridgeCore
import Foundation

/// What every command shares: messages on stderr, usage errors, configuration loading.
enum CLI {
    static let version = "0.1.0"

    static let help = """
        Usage: pushward-bridge <command> [options]

        Commands:
          render FILE... [--config PATH]   print the PushWard requests recorded deliveries would make
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

    static func run(_ arguments: [String]) -> ExitCode {
        guard let command = arguments.first else { return usage("no command given", help: help) }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "render": return RenderCommand.run(rest)
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
