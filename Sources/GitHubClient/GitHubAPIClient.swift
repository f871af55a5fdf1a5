import BridgeCore
import Foundation
import HTTPClientSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The few GitHub REST calls recovery makes: a hook's delivery log, a redelivery, a run and its
/// jobs. An actor: it keeps the rate limit GitHub last reported, the `ETag`s of what it read, and
/// a GitHub App's installation tokens, all shared by the sweep and the stuck-run lookups.
///
/// - **Pacing.** Every answer's `X-RateLimit-Remaining`/`Reset` is kept; with nothing remaining,
///   a call fails at once with `.rateLimited(until:)` instead of spending a request GitHub would
///   refuse. A 403/429 with `Retry-After` (a secondary limit) does the same for that long.
/// - **ETags.** A GET repeats the last `ETag` of the same URL; a 304 (which GitHub does not count
///   against the limit) gives back the body kept with it. The bodies kept add up to at most
///   `etagBudget` bytes, the oldest going first: the URLs that repeat are the first page of each
///   hook's log and the runs being looked up, while cursor pages rarely do.
/// - **Credentials.** A token is sent as it is. An App signs a JWT for `/app/…` calls and trades
///   it for an installation token for everything else (found per owner, kept until 5 minutes
///   before it expires). Neither ever appears in a log line, an error or a metric.
public actor GitHubAPIClient {
    public enum Credential: Sendable {
        case token(String)
        case app(id: Int, key: GitHubAppKey)
    }

    /// Why a call gave no usable answer, in words a person can act on.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// 401: the token or App key is wrong, revoked or expired.
        case unauthorized(String)
        /// 403 (not a rate limit) or 404 on something that should exist: a missing permission.
        case forbidden(String)
        case notFound(String)
        /// Wait until then (seconds since 1970) before calling again.
        case rateLimited(until: Double)
        /// Another 4xx: GitHub understood and would not (409 a run already finished, 422 a state
        /// that does not allow it).
        case refused(status: Int, String)
        /// No answer, an unexpected status, or a body that is not what GitHub sends.
        case failed(String)
        /// Not sent: the call's `SendGate` refused it just before it went (an instance that may no
        /// longer lead). Nothing reached GitHub whole.
        case withheld

        /// GitHub's status code, when it answered with one.
        public var status: Int? {
            switch self {
            case .unauthorized: 401
            case .forbidden: 403
            case .notFound: 404
            case .rateLimited: 429
            case .refused(let status, _): status
            case .failed, .withheld: nil
            }
        }

        public var description: String {
            switch self {
            case .unauthorized(let detail): "GitHub refused the credential (401): \(detail)"
            case .forbidden(let detail): "GitHub refused the request (403): \(detail)"
            case .notFound(let detail): "GitHub has no such thing, or the credential cannot see it (404): \(detail)"
            case .rateLimited(let until): "GitHub's rate limit is spent until \(Int(until))"
            case .refused(let status, let detail): "GitHub refused the request (\(status)): \(detail)"
            case .failed(let detail): detail
            case .withheld: "not sent: this instance may no longer lead"
            }
        }
    }

    /// What GitHub last said of the credential's hourly allowance.
    public struct RateLimit: Sendable, Equatable {
        public var limit: Int
        public var remaining: Int
        /// Seconds since 1970 when `remaining` is back to `limit`.
        public var resetsAt: Double
    }

    /// One page of a hook's delivery log, and the cursor of the older page after it (GitHub's
    /// `Link: <…&cursor=…>; rel="next"`), nil on the last page.
    public struct DeliveryPage: Sendable, Equatable {
        public var deliveries: [HookDelivery]
        public var unreadable: Int
        public var nextCursor: String?
    }

    public let baseURL: String
    private let credential: Credential
    private let userAgent: String
    private let now: @Sendable () -> Double
    private let session: URLSession
    public private(set) var rateLimit: RateLimit?
    private var pausedUntil: Double = 0
    private var etags: [String: (etag: String, body: Data)] = [:]
    private var etagOrder: [String] = []
    private var etagBytes = 0
    public static let etagBudget = 2 * 1024 * 1024
    private var installations: [String: Int] = [:]
    private var installationTokens: [Int: (token: String, expiresAt: Double)] = [:]

    /// Hears of every request once answered (or not): its method, its path without the query,
    /// and the outcome (`ok`, `not_modified`, a status, `no_answer`, `withheld`); for `/metrics` and the log.
    public typealias Observer = @Sendable (_ method: String, _ path: String, _ outcome: String) -> Void
    private let observer: Observer?

    public init(
        baseURL: String, credential: Credential, version: String, timeout: Double = 15,
        now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }, observer: Observer? = nil
    ) {
        self.observer = observer
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.credential = credential
        self.userAgent = "pushward-bridge/\(version)"
        self.now = now
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        session = URLSession(configuration: configuration, delegate: ClientSessionDelegate(), delegateQueue: nil)
    }

    // MARK: The calls

    /// One page of `hook`'s delivery log, newest first; `cursor` from the previous page.
    ///
    /// Every call takes a `gate`, asked just before each request it makes goes (an installation
    /// token's too): a refusal fails the call with `.withheld`, nothing sent.
    public func deliveries(
        of hook: GitHubAPISettings.Hook, cursor: String? = nil, gate: SendGate? = nil
    ) async throws(Failure) -> DeliveryPage {
        var path = hook.path + "/deliveries?per_page=100"
        if let cursor { path += "&cursor=" + PercentEncoding.pathSegment(cursor) }
        let answer = try await call("GET", path, as: hook.owner, gate: gate)
        guard let page = HookDelivery.page(answer.body) else {
            throw .failed("the delivery log of \(hook) is not a JSON array")
        }
        return DeliveryPage(
            deliveries: page.deliveries, unreadable: page.unreadable, nextCursor: Self.nextCursor(answer.link))
    }

    /// Asks GitHub to send delivery `id` of `hook` again (202).
    public func redeliver(_ id: Int, of hook: GitHubAPISettings.Hook, gate: SendGate? = nil) async throws(Failure) {
        _ = try await call("POST", hook.path + "/deliveries/\(id)/attempts", as: hook.owner, gate: gate)
    }

    /// `GET /repos/{repository}/actions/runs/{id}/attempts/{attempt}`: one attempt of the run as
    /// the API has it (the same object a `workflow_run` delivery carries).
    public func run(repository: String, id: Int, attempt: Int, gate: SendGate? = nil) async throws(Failure)
        -> JSONValue
    {
        try await json(
            "/repos/\(Self.escaped(repository))/actions/runs/\(id)/attempts/\(attempt)",
            owner: Self.owner(of: repository), gate: gate)
    }

    /// The jobs of one attempt of a run (up to 100: a run with more shows its first 100).
    public func jobs(repository: String, runID: Int, attempt: Int, gate: SendGate? = nil) async throws(Failure)
        -> JSONValue
    {
        try await json(
            "/repos/\(Self.escaped(repository))/actions/runs/\(runID)/attempts/\(attempt)/jobs?per_page=100",
            owner: Self.owner(of: repository), gate: gate)
    }

    /// `GET …/check-runs/{id}/annotations`: the annotations of a check run (an Actions job's id is
    /// its check run's), the first 50 (`per_page`): what a failure alert quotes is among the first.
    /// Needs `checks: read` (an App) or `repo` (a token, on a private repository).
    public func checkRunAnnotations(repository: String, checkRunID: Int, gate: SendGate? = nil) async throws(Failure)
        -> [JSONValue]
    {
        let path = "/repos/\(Self.escaped(repository))/check-runs/\(checkRunID)/annotations?per_page=50"
        let answer = try await call("GET", path, as: Self.owner(of: repository), gate: gate)
        guard let list = (try? JSONValue(parsing: answer.body))?.arrayValue else {
            throw .failed("GitHub's answer to GET \(path) is not a JSON array")
        }
        return list
    }

    // MARK: Acting on a run (`actions`)

    /// `POST …/runs/{id}/rerun-failed-jobs` (201): a new attempt of the failed jobs and their dependents.
    public func rerunFailedJobs(repository: String, runID: Int) async throws(Failure) {
        _ = try await call(
            "POST", "/repos/\(Self.escaped(repository))/actions/runs/\(runID)/rerun-failed-jobs",
            as: Self.owner(of: repository))
    }

    /// `POST …/runs/{id}/cancel` (202).
    public func cancel(repository: String, runID: Int) async throws(Failure) {
        _ = try await call(
            "POST", "/repos/\(Self.escaped(repository))/actions/runs/\(runID)/cancel", as: Self.owner(of: repository))
    }

    /// One environment a run waits on, from `GET …/runs/{id}/pending_deployments`.
    public struct PendingDeployment: Sendable, Equatable {
        public var environmentID: Int
        public var environmentName: String
        /// Whether the credential's user may review it (`current_user_can_approve`).
        public var canApprove: Bool
    }

    /// The environments the run waits on for a review. `gate` as for `deliveries(of:cursor:gate:)`:
    /// the dispatcher's lookup is the leader's, a press's is any instance's.
    public func pendingDeployments(repository: String, runID: Int, gate: SendGate? = nil) async throws(Failure)
        -> [PendingDeployment]
    {
        let path = "/repos/\(Self.escaped(repository))/actions/runs/\(runID)/pending_deployments"
        let answer = try await call("GET", path, as: Self.owner(of: repository), gate: gate)
        guard let list = (try? JSONValue(parsing: answer.body))?.arrayValue else {
            throw .failed("GitHub's answer to GET \(path) is not a JSON array")
        }
        return list.compactMap { entry in
            guard let environment = entry["environment"], let id = environment["id"]?.intValue else { return nil }
            return PendingDeployment(
                environmentID: id, environmentName: environment["name"]?.stringValue ?? "",
                canApprove: entry["current_user_can_approve"]?.boolValue ?? false)
        }
    }

    /// `POST …/runs/{id}/pending_deployments`: approves or rejects the run's deployments to
    /// `environmentIDs`, with the comment GitHub requires.
    public func reviewDeployments(
        repository: String, runID: Int, environmentIDs: [Int], approve: Bool, comment: String
    ) async throws(Failure) {
        let body: JSONValue = [
            "environment_ids": .array(environmentIDs.map { .number(Double($0)) }),
            "state": .string(approve ? "approved" : "rejected"), "comment": .string(comment),
        ]
        _ = try await call(
            "POST", "/repos/\(Self.escaped(repository))/actions/runs/\(runID)/pending_deployments",
            as: Self.owner(of: repository), body: Data(body.canonicalString.utf8))
    }

    private func json(_ path: String, owner: Owner, gate: SendGate? = nil) async throws(Failure) -> JSONValue {
        let answer = try await call("GET", path, as: owner, gate: gate)
        guard let value = try? JSONValue(parsing: answer.body), value.objectValue != nil else {
            throw .failed("GitHub's answer to GET \(path) is not a JSON object")
        }
        return value
    }

    // MARK: One request

    /// Whose credentials a call needs: the App itself (its JWT), or an installation on an account.
    enum Owner: Sendable, Hashable {
        case app
        case account(String, repository: String?)
    }

    /// `owner/name` with each part percent-encoded: names come from deliveries.
    static func escaped(_ repository: String) -> String {
        repository.split(separator: "/", omittingEmptySubsequences: false).map {
            PercentEncoding.pathSegment(String($0))
        }.joined(separator: "/")
    }

    static func owner(of repository: String) -> Owner {
        .account(String(repository.split(separator: "/").first ?? ""), repository: repository)
    }

    struct Answer {
        var body: Data
        var link: String?
    }

    func call(
        _ method: String, _ path: String, as owner: Owner, body: Data? = nil, gate: SendGate? = nil
    ) async throws(Failure) -> Answer {
        let authorization = try await self.authorization(for: owner, gate: gate)
        return try await send(method, path, authorization: authorization, body: body, gate: gate)
    }

    /// The one place a request leaves: `gate`, when given, is asked here, after the rate limit
    /// and right before the request starts, or for a request with a body as the body is handed
    /// to the connection.
    private func send(
        _ method: String, _ path: String, authorization: String, body: Data? = nil, gate: SendGate? = nil
    ) async throws(Failure) -> Answer {
        let time = now()
        if let reset = rateLimit?.resetsAt, rateLimit?.remaining == 0, reset > time {
            throw .rateLimited(until: reset)
        }
        if pausedUntil > time { throw .rateLimited(until: pausedUntil) }
        guard let url = URL(string: baseURL + path) else { throw .failed("cannot build a URL from \(baseURL)\(path)") }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 15)
        request.httpMethod = method
        request.setValue(authorization, forHTTPHeaderField: "Authorization")
        request.setValue("application/vnd.github+json", forHTTPHeaderField: "Accept")
        request.setValue("2022-11-28", forHTTPHeaderField: "X-GitHub-Api-Version")
        request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        if let body {
            request.setBody(body, gatedBy: gate)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let cached = method == "GET" ? etags[path] : nil
        if let cached { request.setValue(cached.etag, forHTTPHeaderField: "If-None-Match") }
        // A gated body asks the gate itself, later still: as curl takes it.
        if let gate, request.httpBodyStream == nil, !gate.allows() {
            count("withheld", method, path)
            throw .withheld
        }
        let data: Data
        let response: HTTPURLResponse
        do {
            let (received, answer) = try await session.dataCancellable(for: request)
            guard let http = answer as? HTTPURLResponse else { throw URLError(.badServerResponse) }
            (data, response) = (received, http)
        } catch  where gate?.refused == true {
            count("withheld", method, path)
            throw .withheld
        } catch {
            count("no_answer", method, path)
            throw .failed("no answer from \(baseURL) to \(method) \(Self.pathWithoutQuery(path)): \(error)")
        }
        remember(response)
        let status = response.statusCode
        let detail = "\(method) \(Self.pathWithoutQuery(path)): \(Self.message(in: data))"
        switch status {
        case 304 where cached != nil:
            count("not_modified", method, path)
            return Answer(body: cached?.body ?? Data(), link: response.value(forHTTPHeaderField: "Link"))
        case 200..<300:
            count("ok", method, path)
            if method == "GET", let etag = response.value(forHTTPHeaderField: "ETag") { keep(etag, data, for: path) }
            return Answer(body: data, link: response.value(forHTTPHeaderField: "Link"))
        default:
            count(String(status), method, path)
        }
        if status == 403 || status == 429 {
            if let seconds = response.value(forHTTPHeaderField: "Retry-After").flatMap(Double.init) {
                pausedUntil = time + seconds
                throw .rateLimited(until: pausedUntil)
            }
            if let limit = rateLimit, limit.remaining == 0 { throw .rateLimited(until: limit.resetsAt) }
            if status == 429 {
                pausedUntil = time + 60
                throw .rateLimited(until: pausedUntil)
            }
        }
        switch status {
        case 401: throw .unauthorized(detail)
        case 403: throw .forbidden(detail)
        case 404: throw .notFound(detail)
        case 400..<500: throw .refused(status: status, detail)
        default: throw .failed("GitHub answered \(status) to \(detail)")
        }
    }

    private func remember(_ response: HTTPURLResponse) {
        guard let remaining = response.value(forHTTPHeaderField: "X-RateLimit-Remaining").flatMap(Int.init),
            let reset = response.value(forHTTPHeaderField: "X-RateLimit-Reset").flatMap(Double.init)
        else { return }
        let limit = response.value(forHTTPHeaderField: "X-RateLimit-Limit").flatMap(Int.init) ?? remaining
        rateLimit = RateLimit(limit: limit, remaining: remaining, resetsAt: reset)
    }

    private func keep(_ etag: String, _ body: Data, for path: String) {
        guard body.count <= Self.etagBudget else { return }
        if let old = etags[path] {
            etagBytes -= old.body.count
            etagOrder.removeAll { $0 == path }
        }
        etags[path] = (etag, body)
        etagOrder.append(path)
        etagBytes += body.count
        while etagBytes > Self.etagBudget, !etagOrder.isEmpty {
            let oldest = etagOrder.removeFirst()
            etagBytes -= etags.removeValue(forKey: oldest)?.body.count ?? 0
        }
    }

    private func count(_ outcome: String, _ method: String, _ path: String) {
        observer?(method, Self.pathWithoutQuery(path), outcome)
    }

    // MARK: Credentials

    private func authorization(for owner: Owner, gate: SendGate?) async throws(Failure) -> String {
        switch credential {
        case .token(let token):
            return "Bearer " + token
        case .app:
            guard case .account(let account, let repository) = owner else { return "Bearer " + (try appJWT()) }
            return "Bearer " + (try await installationToken(account: account, repository: repository, gate: gate))
        }
    }

    /// A fresh JWT of the App: signed only when a call needs one (an RSA signature each).
    private func appJWT() throws(Failure) -> String {
        guard case .app(let id, let key) = credential, let jwt = key.jwt(appID: id, at: now()) else {
            throw .failed("could not sign the App's JWT")
        }
        return jwt
    }

    /// The account's installation token: the one kept while it has 5 minutes left, else a new one
    /// (the installation found once per account).
    private func installationToken(account: String, repository: String?, gate: SendGate?) async throws(Failure)
        -> String
    {
        if let installation = installations[account], let cached = installationTokens[installation],
            cached.expiresAt - 300 > now()
        {
            return cached.token
        }
        let jwt = try appJWT()
        let installation: Int
        if let known = installations[account] {
            installation = known
        } else {
            // A repository's installation, else the organisation's: the App is installed per account.
            let path =
                repository.map { "/repos/\(Self.escaped($0))/installation" }
                ?? "/orgs/\(PercentEncoding.pathSegment(account))/installation"
            let answer = try await send("GET", path, authorization: "Bearer " + jwt, gate: gate)
            guard let id = (try? JSONValue(parsing: answer.body))?["id"]?.intValue else {
                throw .failed("GitHub's answer to GET \(path) has no installation id")
            }
            installations[account] = id
            installation = id
        }
        let path = "/app/installations/\(installation)/access_tokens"
        let answer = try await send("POST", path, authorization: "Bearer " + jwt, gate: gate)
        let document = try? JSONValue(parsing: answer.body)
        guard let token = document?["token"]?.stringValue,
            let expiresAt = document?["expires_at"]?.stringValue.flatMap(GitHubTimestamp.parse)
        else { throw .failed("GitHub's answer to POST \(path) has no token and expiry") }
        installationTokens[installation] = (token, expiresAt)
        return token
    }

    // MARK: Reading answers

    /// The `cursor` of the `rel="next"` link, or nil.
    static func nextCursor(_ link: String?) -> String? { nextLink(link, item: "cursor") }

    /// The query item `item` of the `rel="next"` link of a `Link` header, or nil: how GitHub
    /// pages both its cursor-paged and its page-numbered lists.
    static func nextLink(_ link: String?, item: String) -> String? {
        guard let link else { return nil }
        for part in link.split(separator: ",") where part.contains(#"rel="next""#) {
            guard let open = part.firstIndex(of: "<"), let close = part.firstIndex(of: ">"), open < close,
                let components = URLComponents(string: String(part[part.index(after: open)..<close]))
            else { continue }
            return components.queryItems?.first { $0.name == item }?.value
        }
        return nil
    }

    /// GitHub's `message` in an error body, with the `message` (or `code` and `field`) of each
    /// of its `errors` (what a 422 "Validation Failed" says was wrong), cut short.
    static func message(in body: Data) -> String {
        let document = try? JSONValue(parsing: body)
        var message = document?["message"]?.stringValue ?? "no message"
        let details = (document?["errors"]?.arrayValue ?? []).compactMap { error in
            error["message"]?.stringValue
                ?? error["code"]?.stringValue.map { code in
                    error["field"]?.stringValue.map { "\($0) \(code)" } ?? code
                }
        }
        if !details.isEmpty { message += " (" + details.joined(separator: "; ") + ")" }
        return String(message.prefix(300))
    }

    static func pathWithoutQuery(_ path: String) -> String {
        String(path.prefix { $0 != "?" })
    }
}

extension GitHubAPISettings.Hook {
    /// Whose credentials list the hook: the App's own (its JWT), else the repository's or
    /// organisation's installation.
    var owner: GitHubAPIClient.Owner {
        switch self {
        case .app: .app
        case .repository(let owner, let name, _): .account(owner, repository: "\(owner)/\(name)")
        case .organization(let organization, _): .account(organization, repository: nil)
        }
    }
}
