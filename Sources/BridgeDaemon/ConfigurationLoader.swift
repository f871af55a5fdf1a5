import BridgeCore
import Foundation
import GitHubClient

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
        // A PostgreSQL URI may carry a password: like the other secrets it can come from a file or a credential.
        if let value = try secret("PUSHWARD_DATABASE", credential: "database_url", environment) {
            _ = try DatabaseLocation(parsing: value, key: "PUSHWARD_DATABASE")
            configuration.database = value
        }
        if let value = environment["PUSHWARD_URL"] {
            if let problem = BridgeConfiguration.pushwardURLProblem(value) {
                throw ConfigurationError(key: "PUSHWARD_URL", problem: problem)
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
            configuration.webhookSecrets = webhookSecrets(fromLines: secrets)
        }
        // The App's key as a systemd credential (LoadCredential=github_app_private_key:/path): the
        // file systemd hands over, readable by the service alone, wins over private_key_file.
        if case .app(let id, _)? = configuration.githubAPI?.credential,
            let directory = environment["CREDENTIALS_DIRECTORY"],
            FileManager.default.fileExists(atPath: directory + "/github_app_private_key")
        {
            configuration.githubAPI?.credential = .app(id: id, privateKeyFile: directory + "/github_app_private_key")
        }
        // Only for a `github.api` section: a token alone does not turn recovery on (see the warning).
        if configuration.githubAPI != nil,
            let token = try secret("PUSHWARD_GITHUB_TOKEN", credential: "github_token", environment), !token.isEmpty
        {
            configuration.githubAPI?.credential = .token(token)
            if let api = configuration.githubAPI, let problem = api.hooks.lazy.compactMap(api.hookProblem).first {
                throw ConfigurationError(key: "github.api.hooks", problem: "with PUSHWARD_GITHUB_TOKEN set, \(problem)")
            }
        }
    }

    /// `PUSHWARD_WEBHOOK_SECRETS` (or its file or credential): one secret a line. Split on newlines
    /// only, since a comma, like any other character, may be part of a secret; a trailing `\r`
    /// (a file saved with CRLF) and empty lines are dropped, nothing else is trimmed.
    ///
    /// Split per Unicode scalar, not per `Character`: `"\r\n"` is one Character, which a split on
    /// `"\n"` would never find.
    public static func webhookSecrets(fromLines text: String) -> [String] {
        text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: true)
            .map { line in String(String.UnicodeScalarView(line.last == "\r" ? line.dropLast() : line[...])) }
            .filter { !$0.isEmpty }
    }

    /// A secret from, in order of preference: systemd credential `credential`, the file named by
    /// `<name>_FILE`, the variable `<name>`. Trailing newlines are dropped (editors add them).
    public static func secret(_ name: String, credential: String, _ environment: [String: String])
        throws(ConfigurationError)
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

    /// The shortest webhook secret accepted, in bytes. GitHub takes any secret, but HMAC is only as
    /// strong as its key: a short one can be guessed offline from a single signed delivery.
    public static let minimumSecretBytes = 16
    /// The example configuration's placeholder secret starts with this.
    public static let placeholderSecretPrefix = "change-me"

    /// Problems that make `serve` and `check-config` refuse (exit 78; the file itself parsed).
    public static func servingProblems(_ configuration: BridgeConfiguration) -> [ConfigurationError] {
        var problems: [ConfigurationError] = []
        if configuration.webhookSecrets.isEmpty {
            problems.append(
                ConfigurationError(
                    key: "github.webhook_secrets",
                    problem: "no webhook secret configured: set one (or PUSHWARD_WEBHOOK_SECRETS) so deliveries "
                        + "can be verified"))
        }
        for (index, secret) in configuration.webhookSecrets.enumerated() {
            if let problem = secretProblem(secret, listen: configuration.listen) {
                problems.append(ConfigurationError(key: "github.webhook_secrets[\(index)]", problem: problem))
            }
        }
        if let api = configuration.githubAPI {
            switch api.credential {
            case nil:
                problems.append(
                    ConfigurationError(
                        key: "github.api",
                        problem: "no credential to call GitHub with: set token (or PUSHWARD_GITHUB_TOKEN, its _FILE "
                            + "or the github_token credential), or app_id with private_key_file"))
            case .app(_, let file)?:
                do {
                    _ = try appKey(file: file)
                } catch {
                    problems.append(error)
                }
            case .token?:
                break
            }
        }
        do throws(ConfigurationError) {
            _ = try configuration.databaseLocation()
        } catch {
            problems.append(error)
        }
        if configuration.adminToken == nil, !isLocalAdmin(configuration.adminListen) {
            problems.append(
                ConfigurationError(
                    key: "admin_token",
                    problem: "admin_listen \(configuration.adminListen) is not on loopback: set an admin token "
                        + "(admin_token, PUSHWARD_ADMIN_TOKEN or the admin_token credential)"))
        } else if let token = configuration.adminToken, token.count < minimumAdminToken,
            !isLocalAdmin(configuration.adminListen)
        {
            // On a network the token is all that stands between anyone who can reach the port and
            // every run's names and history: long enough that guessing it is out of the question.
            problems.append(
                ConfigurationError(
                    key: "admin_token",
                    problem: "is \(token.count) characters and admin_listen \(configuration.adminListen) is not on "
                        + "loopback: use at least \(minimumAdminToken) (the output of `openssl rand -hex 32`)"))
        }
        return problems
    }

    /// The GitHub App's private key in `file`; a file that cannot be read or is not a key is a
    /// problem naming it (`check-config` and the start say the same).
    public static func appKey(file: String) throws(ConfigurationError) -> GitHubAppKey {
        guard let pem = FileManager.default.contents(atPath: file) else {
            throw ConfigurationError(
                key: "github.api.private_key_file",
                problem: "cannot read \(file): the GitHub App's private key (the .pem GitHub gave you)")
        }
        do {
            return try GitHubAppKey(pem: pem)
        } catch {
            throw ConfigurationError(key: "github.api.private_key_file", problem: "\(file) \(error.description)")
        }
    }

    /// Why `secret` must not verify deliveries, or nil. An empty secret made every body "signed"
    /// (an HMAC with an empty key is anyone's to compute); a whitespace-only or short one is a
    /// slip of the same kind. The example's placeholder is public, so it passes only while the
    /// webhook listener is on loopback, where `make run` uses it.
    public static func secretProblem(_ secret: String, listen: String) -> String? {
        if secret.isEmpty {
            return "is empty: anyone could sign a delivery with it; set the secret of your GitHub webhook"
        }
        if secret.allSatisfy(\.isWhitespace) {
            return "is only white space: set the secret of your GitHub webhook"
        }
        if secret.utf8.count < minimumSecretBytes {
            return "is \(secret.utf8.count) bytes long; use at least \(minimumSecretBytes) (for example the output "
                + "of `openssl rand -hex 32`) in GitHub and here"
        }
        if secret.hasPrefix(placeholderSecretPrefix), !isLoopback(listen) {
            return "is still the example's placeholder and listen \(listen) is not on loopback: set the secret of "
                + "your GitHub webhook"
        }
        return nil
    }

    /// Things worth a warning at start that do not stop it.
    public static func servingWarnings(_ configuration: BridgeConfiguration) -> [String] {
        var warnings: [String] = []
        if configuration.webhookSecrets.contains(where: { $0.hasPrefix(placeholderSecretPrefix) }) {
            warnings.append(
                "github.webhook_secrets is still the example's placeholder: fine on a laptop, never for a real hook")
        }
        if let api = configuration.githubAPI, api.hooks.isEmpty, configuration.publicURL == nil {
            warnings.append(
                "github.api lists no hooks: runs that stop hearing from GitHub are looked up, but deliveries GitHub "
                    + "failed to send are not asked for again; list the webhook in github.api.hooks, or set public_url "
                    + "to sweep the hooks that post to <public_url>/webhook")
        }
        if let actions = configuration.actions {
            let approvers = Array(Set(actions.rules.filter { $0.offer.contains(.approve) }.flatMap(\.approvers)))
                .sorted()
            if !approvers.isEmpty, !configuration.routing.isEnabled {
                warnings.append(
                    "actions: without routing, Approve and Reject go to everyone the PushWard key reaches, which is right "
                        + "only when the key belongs to one of the approvers (\(approvers.joined(separator: ", "))): "
                        + "this cannot be checked here; with routing.members each approver gets a notification of "
                        + "their own")
            } else {
                let unreachable = approvers.filter { configuration.routing.members[$0] == nil }
                if !unreachable.isEmpty {
                    warnings.append(
                        "actions: the approvers \(unreachable.joined(separator: ", ")) have no routing.members entry, so "
                            + "no review ever reaches them")
                }
            }
        }
        if let connection = PostgresConnectionString(configuration.database), !connection.isLocal,
            !connection.requiresTLS
        {
            warnings.append(
                "database: the PostgreSQL server is not on this machine and the location sets no sslmode of require, "
                    + "verify-ca or verify-full: libpq's default (prefer) checks no certificate and falls back to "
                    + "plain text silently; add sslmode=verify-full (and sslrootcert) to the location")
        }
        return warnings
    }

    /// True for `127.x.x.x:port`, `[::1]:port` and `localhost:port`.
    public static func isLoopback(_ listen: String) -> Bool {
        guard let colon = listen.lastIndex(of: ":") else { return false }
        return BridgeConfiguration.isLoopbackHost(String(listen[..<colon]))
    }

    /// True when only this machine reaches the admin listener without a token: a loopback address,
    /// or a Unix socket (`unix:PATH`, mode 0600), which only the service's user can open. (The
    /// webhook listener gets no such pass for a socket: a reverse proxy may publish it.)
    /// The shortest admin token taken on a listener off loopback (and not a Unix socket).
    public static let minimumAdminToken = 32

    public static func isLocalAdmin(_ adminListen: String) -> Bool {
        adminListen.hasPrefix("unix:") || isLoopback(adminListen)
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
            "admin_hosts": .array(configuration.adminHosts.map { .string($0) }),
            "admin_token": configuration.adminToken.map(mask) ?? .null, "log_level": .string(configuration.logLevel),
            "log_format": configuration.logFormat.map { .string($0) } ?? .string("(text on a terminal, else json)"),
            "public_url": configuration.publicURL.map { .string($0) } ?? .null,
            "database": .string(DatabaseLocation.redacting(configuration.database)),
            "github": [
                "webhook_secrets": .array(configuration.webhookSecrets.map(mask)),
                "max_body_bytes": .number(Double(configuration.maxBodyBytes)),
                "max_unverified_body_bytes": .number(Double(configuration.maxUnverifiedBodyBytes)),
                "request_deadline": .number(Double(configuration.requestDeadline)),
                "max_connections_per_address": .number(Double(configuration.maxConnectionsPerAddress)),
                "payload_retention": .number(Double(configuration.payloadRetention)),
                "api": configuration.githubAPI.map { githubAPI($0, mask: mask) } ?? .null,
            ],
            "pushward": [
                "url": .string(configuration.pushwardURL),
                "api_key": configuration.apiKey.map(mask) ?? .string("(none: dry-run mode)"),
                "priority": .number(Double(activity.priority)), "ended_ttl": .number(Double(activity.endedTTL)),
                "stale_ttl": .number(Double(activity.staleTTL)), "end_delay": .number(activity.endDelay),
                "end_display_time": .number(activity.endDisplayTime),
                "min_update_interval": .number(activity.minUpdateInterval),
                "fidelity": .string(activity.fidelity.rawValue), "coalesce": .number(activity.coalesce),
                "max_updates_per_hour": .number(Double(activity.maxUpdatesPerHour)),
                "requests_per_minute": .number(Double(configuration.pacing.limit)),
                "rate_window": .number(configuration.pacing.window),
                "budget": {
                    switch configuration.pushwardBudget {
                    case .auto: JSONValue.string("auto")
                    case .unlimited: JSONValue.string("unlimited")
                    case .fixed(let number): JSONValue.number(Double(number))
                    }
                }(),
            ],
            "activity": [
                "scope": .string(activity.scope.rawValue), "template": .string(activity.template.rawValue),
                "icon": .string(activity.icon),
                "step_colors": .bool(activity.stepColors), "completion_grace": .number(activity.completionGrace),
            ],
            "retention": [
                "deliveries": .number(Double(configuration.retention.deliveries)),
                "runs": .number(Double(configuration.retention.runs)),
                "activities": .number(Double(configuration.retention.activities)),
                "step_history": .number(Double(configuration.retention.stepHistory)),
                "step_history_kept_per_branch": .number(Double(RetentionSettings.stepHistoryKeptPerBranch)),
            ],
            "filters": [
                "repositories": rule(configuration.filter.repositories),
                "workflows": rule(configuration.filter.workflows),
                "branches": rule(configuration.filter.branches), "events": rule(configuration.filter.events),
            ],
            "alerts": configuration.alerts.isEnabled ? alerts(configuration.alerts) : .null,
            "routing": configuration.routing.isEnabled ? routing(configuration.routing) : .null,
            "actions": configuration.actions.map(actions) ?? .null,
            "widgets": .array(
                configuration.widgets.map { widget in
                    [
                        "slug": .string(widget.slug), "name": .string(widget.name),
                        "repositories": globs(widget.repositories), "workflows": globs(widget.workflows),
                        "branches": globs(widget.branches), "stale_after": .number(Double(widget.staleAfter)),
                        "forks": .bool(widget.forks),
                    ]
                }),
        ]
    }

    /// A rule's glob list as written (an empty list as `["*"]`): alerts, actions and widgets alike.
    static func globs(_ patterns: [GlobPattern]) -> JSONValue {
        .array((patterns.isEmpty ? ["*"] : patterns.map(\.pattern)).map { .string($0) })
    }

    /// `offer` lists reject beside approve: it is what the buttons will be.
    static func actions(_ settings: ActionSettings) -> JSONValue {
        return [
            "public_url": .string(settings.publicURL),
            "button_url": .string(settings.publicURL + ActionSettings.pathPrefix + "<token>"),
            "token_ttl": .number(Double(settings.tokenTTL)),
            "require_authentication": .bool(settings.requireAuthentication),
            "rules": .array(
                settings.rules.map { rule in
                    [
                        "offer": .array(rule.offer.sorted().map { .string($0.rawValue) }),
                        "approvers": .array(rule.approvers.map { .string($0) }),
                        "repositories": globs(rule.repositories), "workflows": globs(rule.workflows),
                        "branches": globs(rule.branches),
                    ]
                }),
        ]
    }

    static func githubAPI(_ settings: GitHubAPISettings, mask: (String) -> JSONValue) -> JSONValue {
        var described: [String: JSONValue] = [
            "url": .string(settings.url), "hooks": .array(settings.hooks.map { .string($0.description) }),
            "sweep_interval": .number(Double(settings.sweepInterval)),
            "stale_after": .number(Double(settings.staleAfter)),
            "max_redeliveries_per_minute": .number(Double(settings.maxRedeliveriesPerMinute)),
        ]
        switch settings.credential {
        case .token(let token)?: described["token"] = mask(token)
        case .app(let id, let file)?:
            described["app_id"] = .number(Double(id))
            described["private_key_file"] = .string(file)
        case nil: described["token"] = .string("(none)")
        }
        return .object(described)
    }

    static func alerts(_ settings: AlertSettings) -> JSONValue {
        return [
            "rules": .array(
                settings.rules.map { rule in
                    [
                        "when": .array(rule.when.sorted().map { .string($0.rawValue) }),
                        "repositories": globs(rule.repositories), "workflows": globs(rule.workflows),
                        "branches": globs(rule.branches), "events": globs(rule.events), "actors": globs(rule.actors),
                        "level": .string(rule.level.rawValue), "forks": .bool(rule.forks),
                    ]
                })
        ]
    }

    /// Member ids are not secrets, but a list of them says nothing a maintainer checks here: the
    /// logins mapped and the group and tag names are what to read.
    static func routing(_ settings: RoutingSettings) -> JSONValue {
        func mappings(_ list: [RoutingSettings.Mapping]) -> JSONValue {
            .object(
                Dictionary(list.map { ($0.repositories.pattern, JSONValue.array($0.names.map { .string($0) })) }) {
                    first, _ in first
                })
        }
        return [
            "members": .array(settings.members.keys.sorted().map { .string($0) }),
            "groups": mappings(settings.groups), "tags": mappings(settings.tags),
            "default": .string(settings.fallback.rawValue),
        ]
    }
}
