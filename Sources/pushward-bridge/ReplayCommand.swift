import BridgeCore
import BridgeDaemon
import Foundation
import WebhookServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `replay FILE… --url URL --secret S [--delay MS]`: signs and posts recorded deliveries to a
/// running bridge, as GitHub would, and prints each answer.
enum ReplayCommand {
    static let help = """
        Usage: pushward-bridge replay FILE... --url URL [--secret-file PATH | --secret SECRET] [--delay MS]

        Signs each recorded delivery with the webhook secret (X-Hub-Signature-256) and POSTs it to
        URL (the bridge's webhook, e.g. http://127.0.0.1:8080/webhook), in order, printing one line
        per answer:
          <status> <event> <delivery id> <answer body>
        The secret is the first line of --secret-file PATH, else --secret SECRET (which works but
        shows in the process list to every user of the machine: a warning says so), else the first
        of PUSHWARD_WEBHOOK_SECRETS (the variable serve reads, or the file
        PUSHWARD_WEBHOOK_SECRETS_FILE names). Delivery ids come from the file (JSON Lines "delivery") or are made fresh. --delay
        waits between deliveries. Exit 0 when every delivery got a 2xx, 1 otherwise.
        """

    static let spec = CommandSpec(name: "replay", valued: ["url", "secret", "secret-file", "delay"], help: help) {
        parsed throws(ExitCode) in try run(parsed)
    }

    /// The secret to sign with: `--secret-file`'s first line, else `--secret` (with a warning that
    /// it shows in `ps`), else `PUSHWARD_WEBHOOK_SECRETS`'s (or its `_FILE`'s) first secret.
    static func replaySecret(_ parsed: ParsedArguments, environment: [String: String]) -> Result<String, ExitCode> {
        if let path = parsed.options["secret-file"] {
            guard let data = FileManager.default.contents(atPath: path) else {
                CLI.error("--secret-file \(TerminalText.sanitized(path)): cannot be read")
                return .failure(.configuration)
            }
            guard let first = ConfigurationLoader.webhookSecrets(fromLines: String(decoding: data, as: UTF8.self)).first
            else {
                CLI.error("--secret-file \(TerminalText.sanitized(path)): holds no secret")
                return .failure(.configuration)
            }
            return .success(first)
        }
        if let secret = parsed.options["secret"], !secret.isEmpty {
            CLI.error(
                "warning: --secret shows in the process list to every user of this machine; use --secret-file or "
                    + "PUSHWARD_WEBHOOK_SECRETS")
            return .success(secret)
        }
        // As serve reads it: the credential, the _FILE, the variable.
        do throws(ConfigurationError) {
            let text = try ConfigurationLoader.secret(
                "PUSHWARD_WEBHOOK_SECRETS", credential: "webhook_secrets", environment)
            if let first = text.flatMap({ ConfigurationLoader.webhookSecrets(fromLines: $0).first }) {
                return .success(first)
            }
        } catch {
            CLI.error(error.description)
            return .failure(.configuration)
        }
        return .failure(
            CLI.usage(
                "replay needs the webhook secret the bridge is configured with: --secret-file PATH, "
                    + "PUSHWARD_WEBHOOK_SECRETS, or --secret", help: help))
    }

    static func run(_ parsed: ParsedArguments) throws(ExitCode) -> ExitCode {
        guard !parsed.positionals.isEmpty else { return CLI.usage("replay needs at least one FILE", help: help) }
        guard let urlText = parsed.options["url"], let url = URL(string: urlText), url.scheme?.hasPrefix("http") == true
        else { return CLI.usage("replay needs --url http(s)://HOST:PORT/webhook", help: help) }
        let secret = try replaySecret(parsed, environment: ProcessInfo.processInfo.environment).get()
        var delay = 0.0
        if let text = parsed.options["delay"] {
            guard let milliseconds = Double(text), milliseconds >= 0 else {
                return CLI.usage("--delay takes milliseconds", help: help)
            }
            delay = milliseconds / 1000
        }
        let deliveries = try CLI.loadRecordings(parsed.positionals).get()
        var allAccepted = true
        for (index, delivery) in deliveries.enumerated() {
            if index > 0, delay > 0 { Thread.sleep(forTimeInterval: delay) }
            let id = delivery.deliveryID ?? UUID().uuidString.lowercased()
            var request = URLRequest(url: url, timeoutInterval: 30)
            request.httpMethod = "POST"
            request.httpBody = delivery.body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.setValue(delivery.event, forHTTPHeaderField: "X-GitHub-Event")
            request.setValue(id, forHTTPHeaderField: "X-GitHub-Delivery")
            request.setValue(
                WebhookSignature.sign(body: delivery.body, secret: secret), forHTTPHeaderField: "X-Hub-Signature-256")
            request.setValue("pushward-bridge-replay/\(CLI.version)", forHTTPHeaderField: "User-Agent")
            switch post(request) {
            case .success(let (status, body)):
                // The event and id come from the recording, the body quotes its names: sanitized.
                print(TerminalText.sanitized("\(status) \(delivery.event) \(id) \(body)"))
                if !(200..<300).contains(status) { allAccepted = false }
            case .failure(let message):
                CLI.error("delivery \(index + 1) (\(id)): \(message)")
                return .failure
            }
        }
        return allAccepted ? .success : .failure
    }

    struct PostError: Error, CustomStringConvertible {
        var description: String
    }

    /// A blocking POST: the CLI has nothing else to do meanwhile.
    static func post(_ request: URLRequest) -> Result<(Int, String), PostError> {
        let semaphore = DispatchSemaphore(value: 0)
        let box = Box()
        let task = URLSession.shared.dataTask(with: request) { data, response, error in
            if let error {
                box.result = .failure(PostError(description: "\(error.localizedDescription)"))
            } else {
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                let body = String(decoding: data ?? Data(), as: UTF8.self).trimmingCharacters(
                    in: .whitespacesAndNewlines)
                box.result = .success((status, body))
            }
            semaphore.signal()
        }
        task.resume()
        semaphore.wait()
        return box.result ?? .failure(PostError(description: "no answer"))
    }

    private final class Box: @unchecked Sendable {
        var result: Result<(Int, String), PostError>?
    }
}
