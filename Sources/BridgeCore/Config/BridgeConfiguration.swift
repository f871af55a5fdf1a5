import Foundation

/// The bridge's configuration file, as a value. `config.example.json` documents every key;
/// unknown keys are errors (a misspelt key silently ignored is a setting that silently does not apply).
public struct BridgeConfiguration: Sendable, Equatable {
    public var listen = "127.0.0.1:8080"
    public var adminListen = "127.0.0.1:9090"
    /// Bearer token for the admin listener (`/metrics`, the admin API, the status page); required
    /// when `admin_listen` is not on loopback. Nil: none.
    public var adminToken: String?
    /// Host names (without port) the admin listener answers to besides loopback literals and
    /// `localhost`: any other `Host` header is answered 421, so a web page cannot rebind its own
    /// name to the admin address and read it. Empty: loopback names only.
    public var adminHosts: [String] = []
    /// `debug`, `info`, `notice`, `warning` or `error`.
    public var logLevel = "info"
    /// `log_format`: `text` or `json`, or nil (the default) for `serve` to choose: text lines when
    /// standard error is a terminal (a person reads them), JSON objects otherwise (journald,
    /// collectors).
    public var logFormat: String?
    public static let logFormats = ["text", "json"]
    /// `public_url` (or the older `actions.public_url`): where GitHub and phones reach the webhook
    /// listener, without a trailing `/`. `github hooks` points the hook at `<public_url>/webhook`,
    /// recovery finds the hooks that post there, and buttons post to `<public_url>/actions/…`.
    public var publicURL: String?
    /// An SQLite file's path or a `postgresql://` URI, as configured; `databaseLocation()` says which.
    public var database = "var/pushward-bridge.sqlite"
    public var webhookSecrets: [String] = []
    public var maxBodyBytes = 25 * 1024 * 1024
    /// The most body bytes the webhook listener holds for requests whose signature is not checked
    /// yet, all connections together; past it a request is answered 503 with `Retry-After`.
    public var maxUnverifiedBodyBytes = 64 * 1024 * 1024
    /// Seconds a webhook request may take to arrive (request line, headers and body), from the
    /// connection's accept or the end of the request before; past it the connection is closed.
    /// GitHub gives up on a delivery after 10 s; 30 s still carries a 25 MiB body at ~7 Mbit/s.
    public var requestDeadline = 30
    /// Webhook connections one client address may hold at once (`github.max_connections_per_address`);
    /// past it libmicrohttpd refuses the connection (it is reset, not queued). Behind a reverse
    /// proxy every connection comes from the proxy's address, so this is then the whole listener's
    /// limit: raise it to the proxy's upstream connection count (0: no per-address limit).
    public var maxConnectionsPerAddress = 64
    /// How long raw payloads are kept: GitHub can redeliver for 3 days.
    public var payloadRetention = 3 * 86_400
    /// `github.api`: recovery of missed deliveries and stuck runs through GitHub's REST API; nil
    /// (the default) makes no request to GitHub at all.
    public var githubAPI: GitHubAPISettings?
    public var pushwardURL = "https://api.pushward.app"
    /// Nil: dry-run mode, everything computed and recorded, nothing sent.
    public var apiKey: String?
    public var activity = ActivitySettings()
    /// `pushward.budget`: how many Live Activity updates a month the planner may plan with.
    public enum Budget: Sendable, Equatable {
        /// What `GET /auth/me` says (no limit: unlimited).
        case auto
        /// At most this many a month, whatever the account allows.
        case fixed(Int)
        /// No planning: every run at the configured level.
        case unlimited

        /// The budget the planner works with, from what PushWard says was used and allowed: a
        /// fixed number caps the allowance, `unlimited` removes it.
        public func budget(from usage: PushWardUsage) -> PushBudget {
            var limit = usage.liveActivityUpdatesLimit
            switch self {
            case .auto: break
            case .unlimited: limit = nil
            case .fixed(let cap): limit = min(cap, limit ?? cap)
            }
            return PushBudget(used: usage.liveActivityUpdatesUsed, limit: limit, resetsAt: usage.quotaResetsAt)
        }
    }

    public var pushwardBudget: Budget = .auto
    /// `pushward.requests_per_minute` and `pushward.rate_window`: how many requests of every kind
    /// the bridge makes to PushWard in a window (`RequestPacer`).
    public var pacing = RequestPacer.Settings()
    /// How many widgets PushWard keeps an account (§7): more cannot be created.
    public static let widgetLimit = 50
    public var filter = DeliveryFilter()
    /// How long rows are kept once nothing in flight needs them (the `retention` section).
    public var retention = RetentionSettings()
    /// Failure, fix and approval notifications (the `alerts` section); none unless present.
    public var alerts = AlertSettings()
    /// Whose phones each run goes to (the `routing` section, for organisation keys).
    public var routing = RoutingSettings()
    /// Buttons that act on GitHub from the phone (the `actions` section); nil, the default: none.
    public var actions: ActionSettings?
    /// Home-screen widgets, each following the latest run its globs choose (`widgets`; none by default).
    public var widgets: [WidgetSettings] = []

    public init() {}

    /// Whether notifications go out at all: alerts, or the reviews and refusals of `actions`.
    public var sendsNotifications: Bool { alerts.isEnabled || actions != nil }

    /// The activity settings the core runs with. With `github.api`, a quiet run is looked up after
    /// `stale_after`, and the lookup settles it (it ended: GitHub's conclusion; it goes on: the
    /// quiet period starts again), so `completion_grace`'s guess waits until a lookup had its
    /// chance (two rounds of it) and applies only when none could be made.
    public var engineSettings: ActivitySettings {
        var settings = activity
        if let api = githubAPI {
            settings.completionGrace += Double(api.staleAfter) + 2 * GitHubAPISettings.lookupInterval(api.staleAfter)
        }
        return settings
    }

    public static let logLevels = ["debug", "info", "notice", "warning", "error"]

    /// Parses a configuration document.
    public init(json data: Data) throws(ConfigurationError) {
        try self.init(json: data, keyLog: nil)
    }

    /// Parses a configuration document, noting in `keyLog` every key the parser reads (see
    /// `ConfigurationKeyLog`: on a document with every section, the keys it accepts).
    public init(json data: Data, keyLog: ConfigurationKeyLog?) throws(ConfigurationError) {
        let root: [String: JSONValue]
        do {
            guard let object = try JSONValue(parsing: data).objectValue else {
                throw ConfigurationError(key: "(file)", problem: "the configuration must be a JSON object")
            }
            root = object
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError(key: "(file)", problem: "not valid JSON")
        }
        var reader = Reader(root, path: "", keyLog: keyLog)
        listen = try reader.string("listen") ?? listen
        adminListen = try reader.string("admin_listen") ?? adminListen
        adminToken = try reader.string("admin_token").flatMap { $0.isEmpty ? nil : $0 }
        adminHosts = try reader.strings("admin_hosts")?.map { $0.lowercased() } ?? adminHosts
        if let host = adminHosts.first(where: { $0.isEmpty || $0.contains(where: \.isWhitespace) }) {
            throw ConfigurationError(key: "admin_hosts", problem: "\"\(host)\" is not a host name")
        }
        if let level = try reader.string("log_level") {
            guard Self.logLevels.contains(level) else {
                throw ConfigurationError(
                    key: "log_level", problem: "must be one of \(Self.logLevels.joined(separator: ", "))")
            }
            logLevel = level
        }
        if let format = try reader.string("log_format") {
            guard Self.logFormats.contains(format) else {
                throw ConfigurationError(
                    key: "log_format",
                    problem: "must be \"text\" or \"json\" (unset: text on a terminal, JSON otherwise)")
            }
            logFormat = format
        }
        if let url = try reader.string("public_url") {
            publicURL = try Self.publicURL(url, key: "public_url")
        }
        database = try reader.string("database") ?? database
        _ = try DatabaseLocation(parsing: database)
        if var github = try reader.section("github") {
            webhookSecrets = try github.strings("webhook_secrets") ?? []
            maxBodyBytes = try github.integer("max_body_bytes", in: 1...(1 << 30)) ?? maxBodyBytes
            maxUnverifiedBodyBytes =
                try github.integer("max_unverified_body_bytes", in: 1...(1 << 34)) ?? maxUnverifiedBodyBytes
            payloadRetention = try github.duration("payload_retention") ?? payloadRetention
            requestDeadline = try github.duration("request_deadline", in: 1...3_600) ?? requestDeadline
            maxConnectionsPerAddress =
                try github.integer("max_connections_per_address", in: 0...512) ?? maxConnectionsPerAddress
            if var api = try github.section("api") {
                githubAPI = try Self.githubAPI(&api)
                try api.finish()
            }
            try github.finish()
        }
        if var pushward = try reader.section("pushward") {
            pushwardURL = try pushward.string("url") ?? pushwardURL
            if let problem = Self.pushwardURLProblem(pushwardURL) {
                throw ConfigurationError(key: "pushward.url", problem: problem)
            }
            apiKey = try pushward.string("api_key").flatMap { $0.isEmpty ? nil : $0 }
            activity.priority = try pushward.integer("priority", in: 0...10) ?? activity.priority
            activity.slotsPerPerson = try pushward.integer("slots_per_person", in: 1...5) ?? activity.slotsPerPerson
            activity.endedTTL = try pushward.duration("ended_ttl", in: 1...2_592_000) ?? activity.endedTTL
            activity.staleTTL = try pushward.duration("stale_ttl", in: 1...2_592_000) ?? activity.staleTTL
            activity.endDelay = try pushward.duration("end_delay").map(Double.init) ?? activity.endDelay
            activity.endDisplayTime =
                try pushward.duration("end_display_time").map(Double.init) ?? activity.endDisplayTime
            activity.minUpdateInterval =
                try pushward.duration("min_update_interval").map(Double.init) ?? activity.minUpdateInterval
            if let level = try pushward.string("fidelity") {
                guard let fidelity = Fidelity(rawValue: level) else {
                    throw ConfigurationError(
                        key: "pushward.fidelity",
                        problem: "must be one of \(Fidelity.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                activity.fidelity = fidelity
            }
            activity.coalesce = try pushward.duration("coalesce", in: 0...3_600).map(Double.init) ?? activity.coalesce
            switch pushward.value("budget") {
            case nil: break
            case .string("auto")?: pushwardBudget = .auto
            case .string("unlimited")?: pushwardBudget = .unlimited
            case let value?:
                guard let number = value.intValue, number >= 1 else {
                    throw ConfigurationError(
                        key: "pushward.budget",
                        problem: "must be \"auto\", \"unlimited\" or a whole number of updates a month")
                }
                pushwardBudget = .fixed(number)
            }
            // At least 4: a run's create, first frame, end frame and end must fit one hour.
            activity.maxUpdatesPerHour =
                try pushward.integer("max_updates_per_hour", in: 4...3_600) ?? activity.maxUpdatesPerHour
            if let value = pushward.value("requests_per_minute") {
                let most = RequestPacer.Settings.pushwardLimit
                guard let number = value.intValue, (1...most).contains(number) else {
                    throw ConfigurationError(
                        key: "pushward.requests_per_minute",
                        problem: "must be a whole number from 1 to \(most): PushWard allows one IP \(most) requests "
                            + "a minute on every endpoint, shared with the key's other clients "
                            + "(default \(RequestPacer.Settings.defaultLimit))")
                }
                pacing.limit = number
            }
            pacing.window = try pushward.duration("rate_window", in: 1...3_600).map(Double.init) ?? pacing.window
            try pushward.finish()
        }
        if var section = try reader.section("activity") {
            if let scope = try section.string("scope") {
                guard let value = ActivitySettings.Scope(rawValue: scope) else {
                    throw ConfigurationError(key: "activity.scope", problem: "must be \"repository\" or \"workflow\"")
                }
                activity.scope = value
            }
            if let template = try section.string("template") {
                guard let value = ActivitySettings.Template(rawValue: template) else {
                    throw ConfigurationError(key: "activity.template", problem: "must be \"steps\" or \"generic\"")
                }
                activity.template = value
            }
            activity.icon = try section.string("icon") ?? activity.icon
            activity.stepColors = try section.bool("step_colors") ?? activity.stepColors
            activity.completionGrace =
                try section.duration("completion_grace").map(Double.init) ?? activity.completionGrace
            activity.runnerWait =
                try section.duration("runner_wait", in: 30...86_400).map(Double.init) ?? activity.runnerWait
            try section.finish()
        }
        if var section = try reader.section("retention") {
            let range = RetentionSettings.minimumOther...RetentionSettings.maximum
            retention.deliveries =
                try section.duration("deliveries", in: range) ?? max(retention.deliveries, payloadRetention)
            // A payload lives in its delivery's row: a shorter row retention would drop it early.
            if retention.deliveries < payloadRetention {
                throw ConfigurationError(
                    key: "retention.deliveries",
                    problem: "\(DurationText.text(retention.deliveries)) is shorter than github.payload_retention "
                        + "(\(DurationText.text(payloadRetention))): a payload is kept in its delivery's row and "
                        + "would go with it; make it at least as long")
            }
            retention.runs = try section.duration("runs", in: range) ?? retention.runs
            if retention.runs < RetentionSettings.minimumRuns {
                throw ConfigurationError(
                    key: "retention.runs",
                    problem: "must be at least \(DurationText.text(RetentionSettings.minimumRuns)): the status "
                        + "page's month chart counts the budget period's requests (up to 31 days) from the runs' "
                        + "pushes")
            }
            retention.activities = try section.duration("activities", in: range) ?? retention.activities
            retention.stepHistory = try section.duration("step_history", in: range) ?? retention.stepHistory
            try section.finish()
        } else {
            // Unset, it follows a longer payload retention rather than refusing it.
            retention.deliveries = max(retention.deliveries, payloadRetention)
        }
        if var section = try reader.section("alerts") {
            if let rules = try section.objects("rules") {
                alerts.rules = try rules.map { reader throws(ConfigurationError) in try Self.alertRule(reader) }
            } else {
                alerts.rules = [.onDefaultBranch]
            }
            try section.finish()
        }
        if var section = try reader.section("actions") {
            actions = try Self.actions(&section, publicURL: publicURL)
            publicURL = actions?.publicURL
            try section.finish()
            if githubAPI == nil {
                throw ConfigurationError(
                    key: "actions",
                    problem: "needs a github.api section: the buttons act through GitHub's API, with a token "
                        + "that may write Actions (and review deployments, for approve)")
            }
        }
        if let entries = try reader.objects("widgets") {
            widgets = try entries.map { entry throws(ConfigurationError) in try Self.widget(entry) }
            if widgets.count > Self.widgetLimit {
                throw ConfigurationError(
                    key: "widgets",
                    problem: "\(widgets.count) widgets; PushWard keeps at most \(Self.widgetLimit) an account "
                        + "(widget.limit_exceeded beyond), so the rest could never be created")
            }
            var seen: Set<String> = []
            for (index, widget) in widgets.enumerated() where !seen.insert(widget.slug).inserted {
                throw ConfigurationError(
                    key: "widgets[\(index)].slug", problem: "\"\(widget.slug)\" is used by an earlier widget")
            }
        }
        if var section = try reader.section("routing") {
            routing = try Self.routing(&section)
            try section.finish()
        }
        if var filters = try reader.section("filters") {
            filter.repositories = try filters.rule("repositories") ?? filter.repositories
            filter.workflows = try filters.rule("workflows") ?? filter.workflows
            filter.branches = try filters.rule("branches") ?? filter.branches
            filter.events = try filters.rule("events") ?? filter.events
            filter.forks = try filters.bool("forks") ?? filter.forks
            try filters.finish()
        }
        try reader.finish()
    }

    /// The `github.api` section. The credential may also come from the environment (the token
    /// from `PUSHWARD_GITHUB_TOKEN`, its file or credential), so a section without one is read
    /// here and refused at start (`ConfigurationLoader.servingProblems`) if still missing then.
    static func githubAPI(_ reader: inout Reader) throws(ConfigurationError) -> GitHubAPISettings {
        var settings = GitHubAPISettings()
        settings.url = try reader.string("url") ?? settings.url
        if let problem = apiURLProblem(settings.url, example: "https://api.github.com", secret: "the token") {
            throw ConfigurationError(key: reader.key("url"), problem: problem)
        }
        let token = try reader.string("token").flatMap { $0.isEmpty ? nil : $0 }
        let appID = try reader.integer("app_id", in: 1...Int(Int32.max))
        let keyFile = try reader.string("private_key_file").flatMap { $0.isEmpty ? nil : $0 }
        switch (token, appID, keyFile) {
        case (nil, nil, nil):
            break
        case (let token?, nil, nil):
            settings.credential = .token(token)
        case (nil, let id?, let file?):
            settings.credential = .app(id: id, privateKeyFile: file)
        case (nil, _?, nil), (nil, nil, _?):
            throw ConfigurationError(
                key: reader.key(appID == nil ? "app_id" : "private_key_file"),
                problem: "a GitHub App needs both app_id and private_key_file")
        default:
            throw ConfigurationError(
                key: reader.key("token"), problem: "set either token or app_id with private_key_file, not both")
        }
        for (index, text) in (try reader.strings("hooks") ?? []).enumerated() {
            guard let hook = GitHubAPISettings.Hook(text) else {
                throw ConfigurationError(
                    key: "\(reader.key("hooks"))[\(index)]",
                    problem: "\"\(text)\" is not repos/OWNER/REPO/hooks/ID, orgs/ORG/hooks/ID or app")
            }
            if let problem = settings.hookProblem(hook) {
                throw ConfigurationError(key: "\(reader.key("hooks"))[\(index)]", problem: problem)
            }
            if !settings.hooks.contains(hook) { settings.hooks.append(hook) }
        }
        settings.sweepInterval = try reader.duration("sweep_interval", in: 30...86_400) ?? settings.sweepInterval
        settings.staleAfter = try reader.duration("stale_after", in: 5...86_400) ?? settings.staleAfter
        settings.maxRedeliveriesPerMinute =
            try reader.integer("max_redeliveries_per_minute", in: 1...600) ?? settings.maxRedeliveriesPerMinute
        return settings
    }

    /// The `routing` section: `members` (login → member id), `groups` and `tags` (repository
    /// glob → names), `default` (`everyone` or `nobody`).
    static func routing(_ reader: inout Reader) throws(ConfigurationError) -> RoutingSettings {
        var members: [String: String] = [:]
        if var section = try reader.section("members") {
            for login in section.object.keys.sorted() where !login.hasPrefix("_") {
                guard let id = try section.string(login), !id.isEmpty else {
                    throw ConfigurationError(key: section.key(login), problem: "must be a PushWard member id")
                }
                members[login] = id
            }
            try section.finish()
        }
        func mappings(_ name: String) throws(ConfigurationError) -> [RoutingSettings.Mapping] {
            guard var section = try reader.section(name) else { return [] }
            var found: [RoutingSettings.Mapping] = []
            for pattern in section.object.keys.sorted() where !pattern.hasPrefix("_") {
                guard let names = try section.strings(pattern), !names.isEmpty, !names.contains(where: \.isEmpty) else {
                    throw ConfigurationError(key: section.key(pattern), problem: "must be a list of \(name) names")
                }
                found.append(RoutingSettings.Mapping(repositories: GlobPattern(pattern), names: names))
            }
            try section.finish()
            return found
        }
        let groups = try mappings("groups")
        let tags = try mappings("tags")
        var fallback = RoutingSettings.Fallback.everyone
        if let name = try reader.string("default") {
            guard let known = RoutingSettings.Fallback(rawValue: name) else {
                throw ConfigurationError(key: reader.key("default"), problem: "must be \"everyone\" or \"nobody\"")
            }
            fallback = known
        }
        return RoutingSettings(members: members, groups: groups, tags: tags, fallback: fallback)
    }

    /// A `public_url` as configured, checked and without a trailing `/`: `https://` (plain
    /// `http://` only to a loopback host), no query or fragment since paths are appended to it.
    static func publicURL(_ url: String, key: String) throws(ConfigurationError) -> String {
        guard !url.isEmpty else {
            throw ConfigurationError(
                key: key, problem: "is empty: set the address where GitHub and phones reach the webhook listener")
        }
        if let problem = apiURLProblem(url, example: "https://hooks.example.com", secret: "each button's token") {
            throw ConfigurationError(key: key, problem: problem)
        }
        if let components = URLComponents(string: url), components.query != nil || components.fragment != nil {
            throw ConfigurationError(
                key: key, problem: "must not have a query or a fragment: /webhook and /actions/<token> are appended")
        }
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    /// The `actions` section: `public_url` (the top-level one, else the section's: required
    /// in one place; in both, they must agree), `token_ttl`, `require_authentication`, `rules`.
    static func actions(_ reader: inout Reader, publicURL topLevel: String?) throws(ConfigurationError)
        -> ActionSettings
    {
        let own = try reader.string("public_url").map { url throws(ConfigurationError) in
            try publicURL(url, key: reader.key("public_url"))
        }
        if let own, let topLevel, own != topLevel {
            throw ConfigurationError(
                key: reader.key("public_url"),
                problem: "is \(own) but public_url is \(topLevel): they name the same address; set public_url "
                    + "only (actions.public_url is the older spelling of it)")
        }
        guard let url = topLevel ?? own else {
            throw ConfigurationError(
                key: reader.key("public_url"),
                problem: "is required: the address where phones reach the webhook listener, such as "
                    + "https://hooks.example.com (buttons post to <public_url>/actions/<token>); set public_url")
        }
        var settings = ActionSettings(publicURL: url)
        settings.tokenTTL =
            try reader.duration("token_ttl", in: ActionSettings.minimumTokenTTL...604_800) ?? settings.tokenTTL
        settings.requireAuthentication = try reader.bool("require_authentication") ?? settings.requireAuthentication
        if let rules = try reader.objects("rules") {
            settings.rules = try rules.map { reader throws(ConfigurationError) in try Self.actionRule(reader) }
        }
        return settings
    }

    /// One `widgets` entry: `slug` and `name` (required), the globs of the runs it follows, `stale_after`.
    static func widget(_ source: Reader) throws(ConfigurationError) -> WidgetSettings {
        var reader = source
        guard let slug = try reader.string("slug"), WidgetSettings.isValidSlug(slug) else {
            throw ConfigurationError(
                key: reader.key("slug"),
                problem:
                    "is required: 1–128 letters, digits, _ and -, starting with a letter or digit (PushWard's rule)")
        }
        guard let name = try reader.string("name"), (1...256).contains(name.unicodeScalars.count) else {
            throw ConfigurationError(
                key: reader.key("name"), problem: "is required: what the widget is called, 1–256 characters")
        }
        let widget = WidgetSettings(
            slug: slug, name: name, repositories: try reader.globs("repositories"),
            workflows: try reader.globs("workflows"),
            branches: try reader.globs("branches"),
            staleAfter: try reader.duration("stale_after", in: WidgetSettings.staleAfterRange)
                ?? WidgetSettings.defaultStaleAfter,
            forks: try reader.bool("forks") ?? false)
        try reader.finish()
        return widget
    }

    /// One `actions.rules` entry: `offer` (rerun, cancel, approve), and the globs of the runs it covers.
    static func actionRule(_ source: Reader) throws(ConfigurationError) -> ActionRule {
        var reader = source
        guard let names = try reader.strings("offer") else {
            throw ConfigurationError(
                key: reader.key("offer"),
                problem: "is required: a list of \(ActionRule.offerNames.joined(separator: ", "))")
        }
        var offer: Set<ActionKind> = []
        for name in names {
            guard ActionRule.offerNames.contains(name), let kind = ActionKind(rawValue: name) else {
                throw ConfigurationError(
                    key: reader.key("offer"),
                    problem: "\"\(name)\" is not one of \(ActionRule.offerNames.joined(separator: ", "))")
            }
            offer.insert(kind)
        }
        // Said here rather than as "unknown key": someone reaching for it expects it to work.
        if reader.has("forks") {
            throw ConfigurationError(
                key: reader.key("forks"),
                problem: "is not taken: a fork's run never gets a button that acts on GitHub (SECURITY.md, Forks)")
        }
        let approvers = try reader.strings("approvers") ?? []
        for login in approvers where !Self.isGitHubLogin(login) {
            throw ConfigurationError(
                key: reader.key("approvers"),
                problem: "\"\(TerminalText.sanitized(login))\" is not a GitHub login (letters, digits and single "
                    + "hyphens, at most 39)")
        }
        if offer.contains(.approve), approvers.isEmpty {
            throw ConfigurationError(
                key: reader.key("approvers"),
                problem: "is required with approve: the GitHub logins of the required reviewers who may approve from "
                    + "a phone; Approve and Reject go to them alone, never to the run's own actor")
        }
        let rule = ActionRule(
            offer: offer, repositories: try reader.globs("repositories"), workflows: try reader.globs("workflows"),
            branches: try reader.globs("branches"), approvers: approvers)
        try reader.finish()
        return rule
    }

    /// GitHub's rule for a login: 1 to 39 letters, digits and hyphens, not starting or ending with
    /// a hyphen, no two in a row.
    static func isGitHubLogin(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...39).contains(bytes.count), bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-")
        else { return false }
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                continue
            case UInt8(ascii: "-") where bytes[index - 1] != UInt8(ascii: "-"):
                continue
            default:
                return false
            }
        }
        return true
    }

    /// One `alerts.rules` entry. `when` defaults to failures and fixes, every glob list to all.
    static func alertRule(_ source: Reader) throws(ConfigurationError) -> AlertRule {
        var reader = source
        var when: Set<AlertReason> = [.failure, .fixed]
        if let names = try reader.strings("when") {
            when = []
            for name in names {
                guard let reason = AlertReason(rawValue: name), AlertReason.configurable.contains(reason) else {
                    throw ConfigurationError(
                        key: reader.key("when"), problem: "\"\(name)\" is not one of failure, fixed, waiting, queued")
                }
                when.insert(reason)
            }
            if when.isEmpty { throw ConfigurationError(key: reader.key("when"), problem: "names no reason") }
        }
        var level = AlertRule.Level.active
        if let name = try reader.string("level") {
            guard let known = AlertRule.Level(rawValue: name) else {
                throw ConfigurationError(key: reader.key("level"), problem: "must be \"active\" or \"time-sensitive\"")
            }
            level = known
        }
        let rule = AlertRule(
            when: when, repositories: try reader.globs("repositories"), workflows: try reader.globs("workflows"),
            branches: try reader.globs("branches"), events: try reader.globs("events"),
            actors: try reader.globs("actors"), level: level, forks: try reader.bool("forks") ?? false,
            queuedAfter: try reader.duration("queued_after", in: AlertRule.queuedAfterRange).map(Double.init)
                ?? AlertRule.defaultQueuedAfter)
        try reader.finish()
        return rule
    }

    /// Why `url` cannot be PushWard's address, or nil. Every request carries the API key, so it
    /// goes over `https://` only; plain `http://` is allowed to a loopback host (a local test
    /// server, or a TLS-terminating sidecar on the same machine), where nothing crosses a network.
    public static func pushwardURLProblem(_ url: String) -> String? {
        apiURLProblem(url, example: "https://api.pushward.app", secret: "the API key")
    }

    /// Why `url` cannot be the base of an API whose every request carries `secret`, or nil:
    /// `https://`, or plain `http://` to a loopback host only.
    static func apiURLProblem(_ url: String, example: String, secret: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else { return "must be an absolute https:// URL such as \(example)" }
        switch scheme {
        case "https":
            return nil
        case "http" where isLoopbackHost(host):
            return nil
        case "http":
            return "must be https:// (plain http:// is allowed only to a loopback host): \(secret) goes with "
                + "every request"
        default:
            return "must be an absolute https:// URL such as \(example)"
        }
    }

    /// `localhost`, `127.0.0.0/8` or `::1`, as a URL or `listen` spells the host.
    public static func isLoopbackHost(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare.lowercased() == "localhost" || bare == "::1" { return true }
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// Reads keys off one JSON object and remembers which it read, so `finish` can reject the rest.
    struct Reader {
        var object: [String: JSONValue]
        var path: String
        var used: Set<String> = []
        /// Shared by a reader and the readers of its sections and list entries.
        var keyLog: ConfigurationKeyLog?

        init(_ object: [String: JSONValue], path: String, keyLog: ConfigurationKeyLog? = nil) {
            self.object = object
            self.path = path
            self.keyLog = keyLog
        }

        func key(_ name: String) -> String { path.isEmpty ? name : path + "." + name }

        /// Whether `name` is present, without taking it (and without noting it in `keyLog`): for
        /// a key refused with a reason of its own rather than as unknown.
        func has(_ name: String) -> Bool { object[name] != nil }

        mutating func value(_ name: String) -> JSONValue? {
            used.insert(name)
            keyLog?.note(key(name))
            guard let value = object[name], !value.isNull else { return nil }
            return value
        }

        mutating func string(_ name: String) throws(ConfigurationError) -> String? {
            guard let value = value(name) else { return nil }
            guard let text = value.stringValue else {
                throw ConfigurationError(key: key(name), problem: "must be a string")
            }
            return text
        }

        mutating func bool(_ name: String) throws(ConfigurationError) -> Bool? {
            guard let value = value(name) else { return nil }
            guard let flag = value.boolValue else {
                throw ConfigurationError(key: key(name), problem: "must be true or false")
            }
            return flag
        }

        mutating func integer(_ name: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
            guard let value = value(name) else { return nil }
            guard let number = value.intValue, range.contains(number) else {
                throw ConfigurationError(
                    key: key(name), problem: "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }

        /// A duration: `"90s"`, `"15m"`, `"1h30m"`, `"3d"`, or whole seconds.
        mutating func duration(_ name: String, in range: ClosedRange<Int> = 0...31_536_000) throws(ConfigurationError)
            -> Int?
        {
            guard let value = value(name) else { return nil }
            let seconds = value.intValue ?? value.stringValue.flatMap(DurationText.seconds)
            guard let seconds, range.contains(seconds) else {
                throw ConfigurationError(
                    key: key(name),
                    problem: "must be a duration like \"90s\", \"15m\", \"1h30m\" or whole seconds, "
                        + "from \(range.lowerBound) to \(range.upperBound) seconds")
            }
            return seconds
        }

        /// A list of `*` globs (a rule's `repositories`, `workflows`, …); `*` itself is left out,
        /// since an empty list already matches everything.
        mutating func globs(_ name: String) throws(ConfigurationError) -> [GlobPattern] {
            (try strings(name) ?? []).filter { $0 != "*" }.map(GlobPattern.init)
        }

        mutating func strings(_ name: String) throws(ConfigurationError) -> [String]? {
            guard let value = value(name) else { return nil }
            guard let array = value.arrayValue else {
                throw ConfigurationError(key: key(name), problem: "must be a list of strings")
            }
            var texts: [String] = []
            for element in array {
                guard let text = element.stringValue else {
                    throw ConfigurationError(key: key(name), problem: "must be a list of strings")
                }
                texts.append(text)
            }
            return texts
        }

        mutating func section(_ name: String) throws(ConfigurationError) -> Reader? {
            guard let value = value(name) else { return nil }
            guard let object = value.objectValue else {
                throw ConfigurationError(key: key(name), problem: "must be an object")
            }
            return Reader(object, path: key(name), keyLog: keyLog)
        }

        /// A list of objects, each read by a `Reader` of its own (`alerts.rules[0]`).
        mutating func objects(_ name: String) throws(ConfigurationError) -> [Reader]? {
            guard let value = value(name) else { return nil }
            guard let array = value.arrayValue else {
                throw ConfigurationError(key: key(name), problem: "must be a list of objects")
            }
            var readers: [Reader] = []
            for (index, element) in array.enumerated() {
                guard let object = element.objectValue else {
                    throw ConfigurationError(key: "\(key(name))[\(index)]", problem: "must be an object")
                }
                readers.append(Reader(object, path: "\(key(name))[\(index)]", keyLog: keyLog))
            }
            return readers
        }

        mutating func rule(_ name: String) throws(ConfigurationError) -> DeliveryFilter.Rule? {
            guard var section = try section(name) else { return nil }
            let rule = DeliveryFilter.Rule(
                include: (try section.strings("include") ?? []).map(GlobPattern.init),
                exclude: (try section.strings("exclude") ?? []).map(GlobPattern.init))
            try section.finish()
            return rule
        }

        /// Rejects any key that was never read: it is misspelt or not supported.
        func finish() throws(ConfigurationError) {
            // Keys starting with `_` are comments: JSON has no other way to document a file.
            if let unknown = object.keys.filter({ !used.contains($0) && !$0.hasPrefix("_") }).sorted().first {
                throw ConfigurationError(key: key(unknown), problem: "unknown key")
            }
        }
    }
}

extension BridgeConfiguration {
    /// The engine and place `database` names; a value that is neither a path nor a PostgreSQL URI
    /// is an error naming `database`, wherever it was set from.
    public func databaseLocation() throws(ConfigurationError) -> DatabaseLocation {
        try DatabaseLocation(parsing: database)
    }
}

extension BridgeConfiguration {
    /// The rules the engine runs with, all of them at once: the engine is made with these and
    /// never patched afterwards.
    public var engineConfiguration: EngineConfiguration {
        EngineConfiguration(
            settings: engineSettings, filter: filter, alerts: alerts, actions: actions, routing: routing,
            widgets: widgets)
    }
}
