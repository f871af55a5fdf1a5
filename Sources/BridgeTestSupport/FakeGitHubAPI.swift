import BridgeCore
import COpenSSL
import Foundation
import WebhookServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// GitHub, on loopback, for recovery's end-to-end tests: it sends signed webhook deliveries to a
/// listener and logs each attempt as GitHub's hook delivery log does (the listener's status, 0
/// when it could not connect), lists that log newest first in pages with `cursor` links, and
/// redelivers an attempt for real (`POST …/deliveries/{id}/attempts`: the same body, event and
/// GUID, signed again, logged as a redelivery). It serves runs and jobs the test sets, checks
/// credentials as GitHub does (a token; or an App's RS256 JWT, checked against the App's public
/// key, traded for installation tokens), counts a rate limit with GitHub's headers, and answers
/// `ETag`s with 304s that do not count.
public final class FakeGitHubAPI: @unchecked Sendable {
    /// One logged delivery attempt.
    public struct Attempt: Sendable {
        public var id: Int
        public var guid: String
        public var event: String
        public var action: String?
        public var body: Data
        public var deliveredAt: UnixTime
        public var redelivery: Bool
        public var statusCode: Int
    }

    /// One API request as it arrived: what was asked and with which kind of credential.
    public struct Received: Sendable {
        public var method: String
        public var path: String
        /// `token`, `jwt`, `installation`, or `none`/`invalid`.
        public var credential: String
        public var status: Int
    }

    /// One call that acts on a run (re-run, cancel, review), with its JSON body when it had one.
    public struct ActionCall: Sendable, Equatable {
        public var method: String
        public var path: String
        public var body: JSONValue?
    }

    /// An environment a run waits on, as `GET …/pending_deployments` lists it.
    public struct PendingDeployment: Sendable {
        public var id: Int
        public var name: String
        public var canApprove: Bool

        public init(id: Int, name: String, canApprove: Bool = true) {
            self.id = id
            self.name = name
            self.canApprove = canApprove
        }
    }

    public enum Credentials: Sendable {
        case token(String)
        /// An App: JWTs must verify against `publicKeyPEM` and name `appID`; installation `42`.
        case app(id: Int, publicKeyPEM: Data)
    }

    /// The hook path the log is served under (`/repos/acme/widgets/hooks/1`).
    public let hookPath: String
    public let secret: String
    private let credentials: Credentials
    private let lock = NSLock()
    private var webhookURL: String?
    private var attempts: [Attempt] = []
    private var nextID = 1_000
    private var runs: [String: JSONValue] = [:]
    private var jobs: [String: JSONValue] = [:]
    private var installationTokens: Set<String> = []
    private var rateLimit = (limit: 5_000, remaining: 5_000, reset: 0.0)
    private var received: [Received] = []
    private var actionCalls: [ActionCall] = []
    private var pending: [String: [PendingDeployment]] = [:]
    private var annotations: [String: [JSONValue]] = [:]
    private var actionRefusal: (status: Int, message: String)?
    private var server: HTTPServer?
    private let redeliveries = DispatchQueue(label: "fake-github.redeliveries")
    /// Signalled after each API request and each delivery attempt is recorded (`until`).
    private let changes = ChangeSignal()
    public private(set) var port = 0
    /// The repositories' and organisations' webhooks (`…/hooks`), kept as GitHub keeps them.
    public let hookStore = FakeHookStore()
    /// The prefix an Enterprise Server's API lives under: requests may carry it (`baseURL` +
    /// this is such a server's `https://HOST/api/v3`) and are answered as without it.
    public static let enterprisePrefix = "/api/v3"

    public init(
        hookPath: String = "/repos/acme/widgets/hooks/1", secret: String, credentials: Credentials,
        webhookURL: String? = nil
    ) throws {
        self.hookPath = hookPath
        self.secret = secret
        self.credentials = credentials
        self.webhookURL = webhookURL
        rateLimit.reset = Date().timeIntervalSince1970 + 3_600
        // Weak: a request racing the fake's release (its deinit stops the server, on another thread
        // when a handler held the last reference) is told 503 instead of reaching a freed fake.
        let server = try HTTPServer(configuration: HTTPServer.Configuration(listen: "127.0.0.1:0")) {
            [weak self] request in self?.handle(request) ?? .json(503, ["message": "stopping"])
        }
        self.server = server
        port = server.port
    }

    deinit {
        server?.stop()
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    // MARK: What the test sets

    /// Where deliveries go (the bridge's `/webhook`), e.g. once it has started on a free port.
    public func setWebhookURL(_ url: String) {
        lock.withLock { webhookURL = url }
    }

    /// Requests left this hour; 0 makes every counted request a 403 "rate limit exceeded".
    public func setRateLimit(remaining: Int, limit: Int = 5_000, resetIn seconds: Double = 3_600) {
        lock.withLock { rateLimit = (limit, remaining, Date().timeIntervalSince1970 + seconds) }
    }

    /// What `GET /repos/{repository}/actions/runs/{id}/attempts/{attempt}` answers, and that
    /// attempt's jobs (`{"total_count": …, "jobs": […]}`).
    public func setRun(repository: String, id: Int, attempt: Int, run: JSONValue, jobs list: JSONValue) {
        lock.withLock {
            runs["\(repository)#\(id)#\(attempt)"] = run
            jobs["\(repository)#\(id)#\(attempt)"] = list
        }
    }

    /// What `GET …/runs/{id}/pending_deployments` lists for the run.
    public func setPendingDeployments(repository: String, runID: Int, _ deployments: [PendingDeployment]) {
        lock.withLock { pending["\(repository)#\(runID)"] = deployments }
    }

    /// What `GET …/check-runs/{id}/annotations` lists for a job (a job's id is its check run's),
    /// each as GitHub writes one (`path`, `start_line`, `annotation_level`, `title`, `message`, …).
    /// A check run with none set is unknown: 404, as GitHub answers.
    public func setAnnotations(repository: String, checkRunID: Int, _ list: [JSONValue]) {
        lock.withLock { annotations["\(repository)#\(checkRunID)"] = list }
    }

    /// Every acting call (re-run, cancel, review) answers `status` with `message` from now on, as
    /// GitHub does for a credential without the permission (403) or a run in the wrong state (409).
    public func refuseActions(status: Int, message: String) {
        lock.withLock { actionRefusal = (status, message) }
    }

    /// The acting calls received so far, in order (a refused one too): re-runs, cancels, reviews.
    public var actions: [ActionCall] { lock.withLock { actionCalls } }

    /// Run lookups answered so far (`GET …/actions/runs/…`), for tests that count them.
    public var runLookups: Int {
        lock.withLock { received.filter { $0.path.contains("/actions/runs/") && $0.status == 200 }.count }
    }

    // MARK: Sending, as GitHub does

    /// Sends one delivery to the webhook URL, signed, and logs the attempt with the answer's
    /// status (0 when nothing answered). Returns the status.
    @discardableResult
    public func deliver(event: String, body: Data, guid: String = UUID().uuidString.lowercased()) -> Int {
        send(event: event, body: body, guid: guid, redelivery: false)
    }

    /// Sends each event, encoded as GitHub sends it (`PayloadEncoder`), one after another, and
    /// returns the statuses in order (0 when nothing answered). It blocks until every answer is in:
    /// call it off Swift's cooperative pool when an in-process daemon must answer.
    public func deliver(_ events: some Sequence<WebhookEvent>) -> [Int] {
        events.map { event in
            let (name, body) = PayloadEncoder.encode(event)
            return deliver(event: name, body: body)
        }
    }

    /// `deliver(event:body:guid:)` for async code: the blocking send runs on a thread of its own.
    /// A delivery waits for the daemon's answer, and the daemon answers only once its commit has
    /// run on Swift's cooperative pool (two threads on a 2-core machine): a test that waited on
    /// one of those threads held half the pool that every in-process daemon needs.
    @discardableResult
    public func deliver(event: String, body: Data, guid: String = UUID().uuidString.lowercased()) async -> Int {
        await Self.onThread { self.send(event: event, body: body, guid: guid, redelivery: false) }
    }

    /// `deliver(_:)` for async code, the blocking sends on a thread of their own (see above).
    public func deliver(_ events: some Sequence<WebhookEvent>) async -> [Int] {
        let list = Array(events)
        return await Self.onThread { self.deliver(list) }
    }

    /// Runs `body` on a new thread and waits for it without holding the caller's thread.
    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    private func send(event: String, body: Data, guid: String, redelivery: Bool) -> Int {
        let target = lock.withLock { webhookURL }
        var status = 0
        if let target, let url = URL(string: target) {
            var request = URLRequest(url: url, timeoutInterval: 10)
            request.httpMethod = "POST"
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.setValue(event, forHTTPHeaderField: "X-GitHub-Event")
            request.setValue(guid, forHTTPHeaderField: "X-GitHub-Delivery")
            request.setValue("1", forHTTPHeaderField: "X-GitHub-Hook-ID")
            request.setValue(
                WebhookSignature.sign(body: body, secret: secret), forHTTPHeaderField: "X-Hub-Signature-256")
            let done = DispatchSemaphore(value: 0)
            let answer = StatusBox()
            URLSession.shared.dataTask(with: request) { _, response, _ in
                answer.status = (response as? HTTPURLResponse)?.statusCode ?? 0
                done.signal()
            }.resume()
            done.wait()
            status = answer.status
        }
        let action = (try? JSONValue(parsing: body))?["action"]?.stringValue
        lock.withLock {
            nextID += 1
            attempts.append(
                Attempt(
                    id: nextID, guid: guid, event: event, action: action, body: body,
                    deliveredAt: Date().timeIntervalSince1970, redelivery: redelivery, statusCode: status))
        }
        changes.changed()
        return status
    }

    /// Logs an attempt that failed at `deliveredAt` without sending anything: a delivery GitHub
    /// could not make, days ago. Redelivering it sends `body` for real.
    public func logFailedAttempt(event: String, body: Data, guid: String, deliveredAt: UnixTime) {
        let action = (try? JSONValue(parsing: body))?["action"]?.stringValue
        lock.withLock {
            nextID += 1
            attempts.append(
                Attempt(
                    id: nextID, guid: guid, event: event, action: action, body: body, deliveredAt: deliveredAt,
                    redelivery: false, statusCode: 0))
        }
    }

    private final class StatusBox: @unchecked Sendable {
        var status = 0
    }

    /// Every attempt logged, oldest first.
    public var log: [Attempt] { lock.withLock { attempts } }

    /// Every API request, in order.
    public var requests: [Received] { lock.withLock { received } }

    // MARK: Answering the API

    private func handle(_ request: HTTPRequest) -> HTTPResponse {
        let enterprise = request.path.hasPrefix(Self.enterprisePrefix + "/")
        let path = enterprise ? String(request.path.dropFirst(Self.enterprisePrefix.count)) : request.path
        let credential = credentialKind(request)
        let response = answer(
            request, path: path, credential: credential, base: baseURL + (enterprise ? Self.enterprisePrefix : ""))
        lock.withLock {
            received.append(
                Received(method: request.method, path: request.path, credential: credential, status: response.status))
        }
        changes.changed()
        return response
    }

    /// Whether `condition` (of what the fake holds) has come true, checked after each API request
    /// answered and each delivery attempt logged: a wait on those events, not a polling window.
    /// False only when the test's time limit cancelled the wait.
    public func until(_ condition: () -> Bool) async -> Bool {
        await changes.wait(until: condition)
    }

    private func answer(_ request: HTTPRequest, path: String, credential: String, base: String) -> HTTPResponse {
        guard credential != "none", credential != "invalid" else {
            return message(401, "Bad credentials")
        }
        // What a credential may call: a JWT the App's own endpoints (and finding an installation),
        // an installation token everything else.
        if case .app = credentials {
            let needsJWT = path.hasPrefix("/app/") || path.hasSuffix("/installation")
            if needsJWT != (credential == "jwt") {
                return message(
                    401, needsJWT ? "A JSON web token is required for this endpoint" : "Bad credentials")
            }
        }
        let etagged = request.method == "GET"
        let response =
            path.hasPrefix(hookPath + "/deliveries")
            ? route(request, path: path)
            : hookStore.answer(request, path: path, linkBase: base) ?? route(request, path: path)
        if etagged, response.status == 200 {
            let etag = "W/\"" + SHA256.hex(Array(SHA256.digest(Array(response.body)).prefix(8))) + "\""
            if request.header("If-None-Match") == etag {
                return withRateHeaders(HTTPResponse(status: 304, headers: [("ETag", etag)]), counted: false)
            }
            var tagged = response
            tagged.headers.append(("ETag", etag))
            return withRateHeaders(tagged, counted: true)
        }
        return withRateHeaders(response, counted: true)
    }

    private func withRateHeaders(_ response: HTTPResponse, counted: Bool) -> HTTPResponse {
        let (limit, remaining, reset, exceeded) = lock.withLock { () -> (Int, Int, Double, Bool) in
            if counted {
                if rateLimit.remaining == 0 { return (rateLimit.limit, 0, rateLimit.reset, true) }
                rateLimit.remaining -= 1
            }
            return (rateLimit.limit, rateLimit.remaining, rateLimit.reset, false)
        }
        var answer = exceeded ? message(403, "API rate limit exceeded for installation.") : response
        answer.headers += [
            ("X-RateLimit-Limit", String(limit)), ("X-RateLimit-Remaining", String(remaining)),
            ("X-RateLimit-Reset", String(Int(reset))),
        ]
        return answer
    }

    private func route(_ request: HTTPRequest, path: String) -> HTTPResponse {
        let parts = path.split(separator: "/").map(String.init)
        switch (request.method, parts.count) {
        case ("GET", _) where path == hookPath + "/deliveries":
            return deliveryPage(query: request.query ?? "")
        case ("POST", _) where path.hasPrefix(hookPath + "/deliveries/") && path.hasSuffix("/attempts"):
            let id = Int(parts[parts.count - 2]) ?? -1
            guard let attempt = lock.withLock({ attempts.first { $0.id == id } }) else {
                return message(404, "Not Found")
            }
            // One after another, in the order asked, as the log then shows them: sent concurrently,
            // two redeliveries could land (and be logged) swapped.
            redeliveries.async {
                _ = self.send(event: attempt.event, body: attempt.body, guid: attempt.guid, redelivery: true)
            }
            return .json(202, [:])
        case ("GET", 4) where parts[0] == "repos" && parts[3] == "installation":
            return .json(200, ["id": 42])
        case ("GET", 3) where parts[0] == "orgs" && parts[2] == "installation":
            return .json(200, ["id": 42])
        case ("POST", 4) where path == "/app/installations/42/access_tokens":
            let token = "ghs_" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
            lock.withLock { _ = installationTokens.insert(token) }
            let expires = Date().addingTimeInterval(3_600)
            return .json(201, ["token": .string(token), "expires_at": .string(Self.timestamp(expires))])
        case ("POST", 7) where parts[0] == "repos" && parts[4] == "runs" && parts[6] == "rerun-failed-jobs",
            ("POST", 7) where parts[0] == "repos" && parts[4] == "runs" && parts[6] == "cancel",
            ("POST", 7) where parts[0] == "repos" && parts[4] == "runs" && parts[6] == "pending_deployments":
            return act(
                request, path: path, repository: "\(parts[1])/\(parts[2])", runID: Int(parts[5]) ?? -1, verb: parts[6])
        case ("GET", 7) where parts[0] == "repos" && parts[4] == "runs" && parts[6] == "pending_deployments":
            let list = lock.withLock { pending["\(parts[1])/\(parts[2])#\(parts[5])"] ?? [] }
            return .json(
                200,
                .array(
                    list.map { deployment in
                        [
                            "environment": ["id": .number(Double(deployment.id)), "name": .string(deployment.name)],
                            "wait_timer": 0, "current_user_can_approve": .bool(deployment.canApprove),
                            "reviewers": [],
                        ]
                    }))
        case ("GET", 6) where parts[0] == "repos" && parts[3] == "check-runs" && parts[5] == "annotations":
            guard let list = lock.withLock({ annotations["\(parts[1])/\(parts[2])#\(parts[4])"] }) else {
                return message(404, "Not Found")
            }
            // `per_page`: 30 unless asked, at most 100.
            let perPage = (request.query ?? "").split(separator: "&").compactMap { item -> Int? in
                let pair = item.split(separator: "=", maxSplits: 1)
                return pair.count == 2 && pair[0] == "per_page" ? Int(pair[1]) : nil
            }.first
            return .json(200, .array(Array(list.prefix(min(perPage ?? 30, 100)))))
        case ("GET", 8)
        where parts[0] == "repos" && parts[3] == "actions" && parts[4] == "runs" && parts[6] == "attempts":
            let key = "\(parts[1])/\(parts[2])#\(parts[5])#\(parts[7])"
            return lock.withLock { runs[key] }.map { .json(200, $0) } ?? message(404, "Not Found")
        case ("GET", 9) where parts[0] == "repos" && parts[4] == "runs" && parts[6] == "attempts" && parts[8] == "jobs":
            let key = "\(parts[1])/\(parts[2])#\(parts[5])#\(parts[7])"
            return lock.withLock { jobs[key] }.map { .json(200, $0) } ?? message(404, "Not Found")
        default:
            return message(404, "Not Found")
        }
    }

    /// A re-run (201), a cancel (202) or a review (200), recorded; a review's body is checked as
    /// GitHub does (422 without environment ids it waits on, a state or a comment).
    private func act(_ request: HTTPRequest, path: String, repository: String, runID: Int, verb: String) -> HTTPResponse
    {
        let body = request.body.isEmpty ? nil : try? JSONValue(parsing: request.body)
        let refusal = lock.withLock { () -> (status: Int, message: String)? in
            actionCalls.append(ActionCall(method: request.method, path: path, body: body))
            return actionRefusal
        }
        if let refusal { return message(refusal.status, refusal.message) }
        switch verb {
        case "rerun-failed-jobs": return .json(201, [:])
        case "cancel": return .json(202, [:])
        default:
            let waiting = Set(lock.withLock { pending["\(repository)#\(runID)"] ?? [] }.map(\.id))
            guard let ids = body?["environment_ids"]?.arrayValue?.compactMap(\.intValue), !ids.isEmpty,
                ids.allSatisfy(waiting.contains)
            else { return message(422, "environment_ids must name environments the run waits on") }
            guard let state = body?["state"]?.stringValue, ["approved", "rejected"].contains(state) else {
                return message(422, "state must be approved or rejected")
            }
            guard let comment = body?["comment"]?.stringValue, !comment.isEmpty else {
                return message(422, "comment is required")
            }
            return .json(200, [])
        }
    }

    /// Newest first, `per_page` at a time; a cursor `v1_<id>` starts below that attempt's id.
    private func deliveryPage(query: String) -> HTTPResponse {
        let items = URLComponents(string: "?" + query)?.queryItems ?? []
        let perPage = min(100, max(1, items.first { $0.name == "per_page" }?.value.flatMap(Int.init) ?? 30))
        let below = items.first { $0.name == "cursor" }?.value.flatMap { Int($0.dropFirst(3)) } ?? Int.max
        let newestFirst = lock.withLock { attempts.reversed().filter { $0.id < below } }
        let page = Array(newestFirst.prefix(perPage))
        let entries: [JSONValue] = page.map { attempt in
            [
                "id": .number(Double(attempt.id)), "guid": .string(attempt.guid),
                "delivered_at": .string(Self.timestamp(Date(timeIntervalSince1970: attempt.deliveredAt))),
                "redelivery": .bool(attempt.redelivery), "duration": 0.1,
                "status": .string(attempt.statusCode == 0 ? "Invalid HTTP Response: 0" : "OK"),
                "status_code": .number(Double(attempt.statusCode)), "event": .string(attempt.event),
                "action": attempt.action.map { .string($0) } ?? .null, "installation_id": 42, "repository_id": 1,
            ]
        }
        var headers: [(String, String)] = [("Content-Type", "application/json")]
        if newestFirst.count > perPage, let last = page.last {
            headers.append(
                ("Link", "<\(baseURL)\(hookPath)/deliveries?per_page=\(perPage)&cursor=v1_\(last.id)>; rel=\"next\""))
        }
        return HTTPResponse(status: 200, headers: headers, body: JSONValue.array(entries).canonicalData)
    }

    // MARK: Credentials

    private func credentialKind(_ request: HTTPRequest) -> String {
        guard let header = request.header("Authorization"), header.hasPrefix("Bearer ") else { return "none" }
        let presented = String(header.dropFirst("Bearer ".count))
        switch credentials {
        case .token(let token):
            return presented == token ? "token" : "invalid"
        case .app(let id, let publicKey):
            if lock.withLock({ installationTokens.contains(presented) }) { return "installation" }
            return Self.verifyJWT(presented, appID: id, publicKeyPEM: publicKey) ? "jwt" : "invalid"
        }
    }

    /// RS256 over `header.claims`, `iss` the App's id, issued no later than now and expiring
    /// within 10 minutes of issue, not yet expired: what GitHub checks.
    public static func verifyJWT(
        _ jwt: String, appID: Int, publicKeyPEM: Data, now: Double = Date().timeIntervalSince1970
    )
        -> Bool
    {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = base64URLDecode(parts[0]), let claimData = base64URLDecode(parts[1]),
            let signature = base64URLDecode(parts[2]),
            (try? JSONValue(parsing: headerData))?["alg"]?.stringValue == "RS256",
            let claims = try? JSONValue(parsing: claimData), let issued = claims["iat"]?.doubleValue,
            let expires = claims["exp"]?.doubleValue,
            claims["iss"]?.stringValue == String(appID)
                || claims["iss"]?.intValue == appID,
            issued <= now + 1, expires > now, expires - issued <= 600
        else { return false }
        guard let key = publicKeyPEM.withUnsafeBytes({ pwb_public_key_load($0.baseAddress, $0.count) }) else {
            return false
        }
        defer { pwb_private_key_free(key) }
        let input = Array((parts[0] + "." + parts[1]).utf8)
        let bytes = Array(signature)
        return pwb_rs256_verify(key, input, input.count, bytes, bytes.count) == 1
    }

    static func base64URLDecode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    // MARK: Helpers

    private func message(_ status: Int, _ text: String) -> HTTPResponse {
        .json(status, ["message": .string(text), "documentation_url": "https://docs.github.com/rest"])
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
