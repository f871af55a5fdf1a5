import BridgeCore
import Foundation

/// Builds the effective configuration: the JSON file, then `PUSHWARD_*` environment variables,
/// then secrets from `*_FILE` paths and systemd credentials (`$CREDENTIALS_DIRECTORY`).
///
/// Environment beats the file so a unit or container can change one setting without editing
/// it; a secret from a file or credential beats a plain variable, since that is where an operator
/// who bothered to set one up wants it read from.
public enum ConfigurationLoader {
    /// The file `serve` and the CLI read when `--config` is not given: the first that exists.
    public static let defaultPaths = ["config.json", "/etc/pushward-bridge/config.json"]

    public static func load(
        path: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> BridgeConfiguration {
        let chosen = path ?? defaultPaths.first { FileManager.default.fileExists(atPath: $0) }
        var configuration = BridgeConfiguration()
        if let chosen {
            guard let data = FileManager.default.contents(atPath: chosen) else {
                throw ConfigurationError(key: "(file)", problem: "cannot read \(chosen)")
            }
            do {
                configuration = try BridgeConfiguration(json: data)
            } catch {
                throw ConfigurationError(key: error.key, problem: "\(error.problem) (in \(chosen))")
            }
        }
        try applyEnvironment(environment, to: &configuration)
        return configuration
    }

    static func applyEnvironment(_ environment: [String: String], to configuration: inout BridgeConfiguration)
        throws(ConfigurationError)
    {
        if let value = environment["PUSHWARD_LISTEN"] { configuration.listen = value }
        if let value = environment["PUSHWARD_ADMIN_LISTEN"] { configuration.adminListen = value }
        if let value = environment["PUSHWARD_DATABASE"] { configuration.database = value }
        if let value = environment["PUSHWARD_URL"] {
            guard value.hasPrefix("http://") || value.hasPrefix("https://") else {
                throw ConfigurationError(key: "PUSHWARD_URL", problem: "must be an http(s) URL")
            }
            configuration.pushwardURL = value
        }
        if let key = try secret("PUSHWARD_API_KEY", credential: "api_key", environment) {
            configuration.apiKey = key.isEmpty ? nil : key
        }
        if let token = try secret("PUSHWARD_ADMIN_TOKEN", credential: "admin_token", environment) {
            configuration.adminToken = token.isEmpty ? nil : token
        }
        if let level = environment["PUSHWARD_LOG_LEVEL"] {
            guard BridgeConfiguration.logLevels.contains(level) else {
                throw ConfigurationError(
                    key: "PUSHWARD_LOG_LEVEL",
                    problem: "must be one of \(BridgeConfiguration.logLevels.joined(separator: ", "))")
            }
            configuration.logLevel = level
        }
        if let secrets = try secret("PUSHWARD_WEBHOOK_SECRETS", credential: "webhook_secrets", environment) {
            configuration.webhookSecrets = secrets.split(whereSeparator: { $0 == "\n" || $0 == "," })
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
    }

    /// A secret from, in order of preference: systemd credential `credential`, the file named by
    /// `<name>_FILE`, the variable `<name>`. Trailing newlines are dropped (editors add them).
    static func secret(_ name: String, credential: String, _ environment: [String: String]) throws(ConfigurationError)
        -> String?
    {
        if let directory = environment["CREDENTIALS_DIRECTORY"] {
            let path = directory + "/" + credential
            if let data = FileManager.default.contents(atPath: path) {
                return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
            }
        }
        if let path = environment[name + "_FILE"] {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(key: name + "_FILE", problem: "cannot read \(path)")
            }
            return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
        }
        return environment[name]
    }

    /// Problems that make `serve` refuse to start (the file itself parsed).
    public static func servingProblems(_ configuration: BridgeConfiguration) -> [ConfigurationError] {
        var problems: [ConfigurationError] = []
        if configuration.webhookSecrets.isEmpty {
            problems.append(
                ConfigurationError(
                    key: "github.webhook_secrets",
                    problem: "no webhook secret configured: set one (or PUSHWARD_WEBHOOK_SECRETS) so deliveries "
                        + "can be verified"))
        }
        if configuration.adminToken == nil, !isLoopback(configuration.adminListen) {
            problems.append(
                ConfigurationError(
                    key: "admin_token",
                    problem: "admin_listen \(configuration.adminListen) is not on loopback: set an admin token "
                        + "(admin_token, PUSHWARD_ADMIN_TOKEN or the admin_token credential)"))
        }
        return problems
    }

    /// Things worth a warning at start that do not stop it.
    public static func servingWarnings(_ configuration: BridgeConfiguration) -> [String] {
        var warnings: [String] = []
        if configuration.webhookSecrets.contains(where: { $0.hasPrefix("change-me") }) {
            warnings.append(
                "github.webhook_secrets is still the example's placeholder: fine on a laptop, never for a real hook")
        }
        return warnings
    }

    /// True for `127.x.x.x:port`, `[::1]:port` and `localhost:port`.
    public static func isLoopback(_ listen: String) -> Bool {
        listen.hasPrefix("127.") || listen.hasPrefix("[::1]:") || listen.hasPrefix("localhost:")
    }

    /// The configuration as `check-config` prints it, with secrets masked.
    public static func describe(_ configuration: BridgeConfiguration) -> JSONValue {
        // Only the length: even a prefix narrows a guess, and the point is to see that it is set.
        func mask(_ secret: String) -> JSONValue { .string("******** (\(secret.count) characters)") }
        let activity = configuration.activity
        func rule(_ rule: DeliveryFilter.Rule) -> JSONValue {
            [
                "include": .array(rule.include.map { .string($0.pattern) }),
                "exclude": .array(rule.exclude.map { .string($0.pattern) }),
            ]
        }
        return [
            "listen": .string(configuration.listen), "admin_listen": .string(configuration.adminListen),
            "admin_token": configuration.adminToken.map(mask) ?? .null, "log_level": .string(configuration.logLevel),
            "database": .string(configuration.database),
            "github": [
                "webhook_secrets": .array(configuration.webhookSecrets.map(mask)),
                "max_body_bytes": .number(Double(configuration.maxBodyBytes)),
                "payload_retention": .number(Double(configuration.payloadRetention)),
            ],
            "pushward": [
                "url": .string(configuration.pushwardURL),
                "api_key": configuration.apiKey.map(mask) ?? .string("(none: dry-run mode)"),
                "priority": .number(Double(activity.priority)), "ended_ttl": .number(Double(activity.endedTTL)),
                "stale_ttl": .number(Double(activity.staleTTL)), "end_delay": .number(activity.endDelay),
                "end_display_time": .number(activity.endDisplayTime),
                "min_update_interval": .number(activity.minUpdateInterval),
            ],
            "activity": [
                "scope": .string(activity.scope.rawValue), "icon": .string(activity.icon),
                "step_colors": .bool(activity.stepColors), "completion_grace": .number(activity.completionGrace),
            ],
            "filters": [
                "repositories": rule(configuration.filter.repositories),
                "workflows": rule(configuration.filter.workflows),
                "branches": rule(configuration.filter.branches), "events": rule(configuration.filter.events),
            ],
        ]
    }
}
