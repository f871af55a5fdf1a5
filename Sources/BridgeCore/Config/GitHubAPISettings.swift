import Foundation

/// `github.api`: how the bridge talks to GitHub's REST API to recover what webhooks missed
/// (redelivering failed deliveries, looking up runs no delivery has spoken of for a while).
/// Absent: no request is ever made to GitHub and the daemon works from webhooks alone.
public struct GitHubAPISettings: Sendable, Equatable {
    /// How the bridge proves who it is to GitHub.
    public enum Credential: Sendable, Equatable {
        /// A fine-grained or classic personal access token (or an installation token made
        /// elsewhere), sent as `Authorization: Bearer`.
        case token(String)
        /// A GitHub App: RS256 JWTs signed with its private key (a PEM file), exchanged for
        /// installation tokens; the App's own webhook is read with the JWT itself.
        case app(id: Int, privateKeyFile: String)
    }

    /// A webhook whose deliveries the bridge watches and has redelivered.
    public enum Hook: Sendable, Equatable, Hashable, CustomStringConvertible {
        /// `repos/OWNER/REPO/hooks/ID`
        case repository(owner: String, name: String, id: Int)
        /// `orgs/ORG/hooks/ID`
        case organization(String, id: Int)
        /// `app`: the GitHub App's own webhook (needs the App's credentials).
        case app

        /// Parses the configuration's spelling; nil when it is none of the three.
        public init?(_ text: String) {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            func segment(_ value: String) -> Bool {
                !value.isEmpty && value != "." && value != ".."
                    && value.unicodeScalars.allSatisfy { Self.segmentCharacters.contains($0) }
            }
            switch parts.count {
            case 1 where parts[0] == "app":
                self = .app
            case 4 where parts[0] == "orgs" && parts[2] == "hooks" && segment(parts[1]):
                guard let id = Int(parts[3]), id > 0 else { return nil }
                self = .organization(parts[1], id: id)
            case 5 where parts[0] == "repos" && parts[3] == "hooks" && segment(parts[1]) && segment(parts[2]):
                guard let id = Int(parts[4]), id > 0 else { return nil }
                self = .repository(owner: parts[1], name: parts[2], id: id)
            default:
                return nil
            }
        }

        /// Letters, digits, `-`, `_` and `.`: what GitHub allows in owner and repository names,
        /// so a path built from them needs no escaping; `.` and `..` alone are refused, so it
        /// cannot climb out of its prefix either.
        static let segmentCharacters = Set(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.".unicodeScalars)

        /// The REST path of the hook (`/repos/acme/rocket/hooks/1`, `/app/hook`), to which
        /// `/deliveries` is appended.
        public var path: String {
            switch self {
            case .repository(let owner, let name, let id): "/repos/\(owner)/\(name)/hooks/\(id)"
            case .organization(let organization, let id): "/orgs/\(organization)/hooks/\(id)"
            case .app: "/app/hook"
            }
        }

        /// As the configuration spells it.
        public var description: String {
            switch self {
            case .repository(let owner, let name, let id): "repos/\(owner)/\(name)/hooks/\(id)"
            case .organization(let organization, let id): "orgs/\(organization)/hooks/\(id)"
            case .app: "app"
            }
        }
    }

    /// The REST base URL: `https://api.github.com`, or an Enterprise Server's `https://HOST/api/v3`.
    public var url = "https://api.github.com"
    /// Nil until a token or App is configured; the section without one is refused at start.
    public var credential: Credential?
    public var hooks: [Hook] = []
    /// Seconds between sweeps of the hooks' deliveries (also one at start, and one as soon as the
    /// listener answers again after it was unreachable).
    public var sweepInterval = 300
    /// Seconds a run in progress may go without a delivery before the bridge asks GitHub about it.
    public var staleAfter = 300
    /// At most this many redeliveries are requested a minute, oldest first.
    public var maxRedeliveriesPerMinute = 30

    public init() {}

    /// Seconds between two looks for quiet runs: a run is looked up at most this long after it
    /// became `stale_after` quiet.
    public static func lookupInterval(_ staleAfter: Int) -> Double {
        min(30, max(1, Double(staleAfter) / 2))
    }

    /// How long this GitHub keeps a hook's deliveries, so how far back the sweep asks for missed
    /// ones: 3 days on GitHub.com, 7 on an Enterprise Server.
    public var deliveryRetention: UnixTime {
        Self.isEnterpriseServer(apiURL: url) ? RedeliveryPlan.enterpriseServerRetention : RedeliveryPlan.githubRetention
    }

    /// Whether `apiURL` is an Enterprise Server's API (`https://HOST/api/v3`): any host but
    /// GitHub's own clouds. `api.github.com` is GitHub.com; `api.SUBDOMAIN.ghe.com` is GitHub
    /// Enterprise Cloud with data residency, which is GitHub.com's service in another region and
    /// documented with its 3 days. Guessing 7 for a cloud would be the harmful mistake: GitHub
    /// refuses to redeliver what it no longer keeps, and that refusal fails the sweep.
    public static func isEnterpriseServer(apiURL: String) -> Bool {
        var rest = Substring(apiURL)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        var authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host = authority.lowercased()
        if !host.hasPrefix("["), let colon = host.lastIndex(of: ":") { host = String(host[..<colon]) }
        while host.hasSuffix(".") { host.removeLast() }
        if host == "api.github.com" { return false }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        let dataResidency =
            labels.count == 4 && labels[0] == "api" && !labels[1].isEmpty && labels[2] == "ghe" && labels[3] == "com"
        return !dataResidency
    }

    /// Why a hook cannot be watched with `credential`, or nil: the App's webhook is read with the
    /// App's JWT, which a token cannot make.
    public func hookProblem(_ hook: Hook) -> String? {
        if hook == .app, case .token? = credential {
            return "\"app\" (the GitHub App's own webhook) is listed with the App's JWT: set app_id and "
                + "private_key_file, or list the repository or organisation hook instead"
        }
        return nil
    }
}
