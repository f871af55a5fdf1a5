import BridgeCore
import Foundation
import HTTPClientSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The PushWard REST client: sends one `PushWardRequest`, or asks for the account's usage, and
/// says what came back, never throwing.
///
/// It sets `Content-Type`, `Accept` and `User-Agent` itself: URLSession on Linux would otherwise
/// label a body `application/x-www-form-urlencoded` and introduce itself as curl. It does not treat
/// 4xx as an error (URLSession does not either): every status is an answer for the dispatcher.
public struct PushWardClient: Sendable {
    public struct Configuration: Sendable {
        /// `https://api.pushward.app`, or a self-hosted server.
        public var baseURL: String
        /// An integration key (`hlk_…`).
        public var apiKey: String
        public var timeout: Double = 10
        public var userAgent: String

        public init(baseURL: String, apiKey: String, timeout: Double = 10, version: String) {
            self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
            self.apiKey = apiKey
            self.timeout = timeout
            self.userAgent = "pushward-bridge/\(version)"
        }
    }

    public let configuration: Configuration
    private let session: URLSession

    public init(configuration: Configuration) {
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = configuration.timeout
        sessionConfiguration.timeoutIntervalForResource = configuration.timeout
        sessionConfiguration.httpMaximumConnectionsPerHost = 8
        session = URLSession(configuration: sessionConfiguration, delegate: ClientSessionDelegate(), delegateQueue: nil)
    }

    /// The URLRequest for `request`: exposed so tests can check every header without a network.
    /// With a `gate`, the body goes out only if the gate still allows it as curl takes it.
    public func urlRequest(for request: PushWardRequest, gate: SendGate? = nil) -> URLRequest? {
        guard var urlRequest = baseRequest(method: request.method.rawValue, path: request.path) else { return nil }
        // A DELETE has no body, so nothing to gate as it is handed over: `exchange` asks the gate
        // just before it starts, and deleting an ended activity twice deletes nothing more.
        guard request.method != .delete else { return urlRequest }
        urlRequest.setBody(request.body.canonicalData, gatedBy: gate)
        urlRequest.setValue(
            request.method == .patch ? "application/merge-patch+json" : "application/json",
            forHTTPHeaderField: "Content-Type")
        return urlRequest
    }

    /// The `GET /auth/me` request: exposed, like `urlRequest(for:)`, so tests can check its headers.
    /// No body and no `Content-Type`; the same `Accept`, `User-Agent` and key as every other call.
    public func usageURLRequest() -> URLRequest? {
        baseRequest(method: "GET", path: "/auth/me")
    }

    /// The headers every call carries: the key, an explicit `Accept` (PushWard answers errors as
    /// `application/problem+json`), and our own `User-Agent` rather than URLSession's.
    private func baseRequest(method: String, path: String) -> URLRequest? {
        guard let url = URL(string: configuration.baseURL + path) else { return nil }
        var urlRequest = URLRequest(
            url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: configuration.timeout)
        urlRequest.httpMethod = method
        urlRequest.setValue("Bearer " + configuration.apiKey, forHTTPHeaderField: "Authorization")
        urlRequest.setValue("application/json, application/problem+json", forHTTPHeaderField: "Accept")
        urlRequest.setValue(configuration.userAgent, forHTTPHeaderField: "User-Agent")
        return urlRequest
    }

    /// Sends `request`. With a `gate`, asked as the body is handed to the connection, a request the
    /// gate refuses is withheld (`gate.refused` says so; the answer is then `noAnswer`).
    public func send(_ request: PushWardRequest, gate: SendGate? = nil) async -> PushWardAnswer {
        guard let urlRequest = urlRequest(for: request, gate: gate) else {
            return .noAnswer(reason: "cannot build a URL from \(configuration.baseURL)\(request.path)")
        }
        switch await exchange(urlRequest, gate: gate) {
        case .failed(let reason):
            return .noAnswer(reason: reason)
        case .answered(let status, let body, _) where (200..<300).contains(status):
            // A PATCH's answer is the activity: its `state` says whether PushWard preempted it.
            let state =
                request.resource == .activities && request.method == .patch
                ? (try? JSONValue(parsing: body))?["state"]?.stringValue : nil
            return .success(status: status, state: state)
        case .answered(let status, let body, let retryAfter):
            return .problem(ProblemDecoder.decode(status: status, body: body, retryAfterHeader: retryAfter))
        }
    }

    /// The slugs of the key's activities in `state` (`GET /activities?state=…`, free of quota),
    /// every page of them; nil when PushWard gave no usable answer (the caller asks again later).
    /// A `gate` is asked before each page is asked for; a refusal ends the list with nil.
    public func activitySlugs(state: String, gate: SendGate? = nil) async -> [String]? {
        var slugs: [String] = []
        var after: String?
        // The account holds at most 50 activities: a few pages of 100 are more than enough, and
        // a server that keeps answering with a cursor cannot keep the caller here for ever.
        for _ in 0..<10 {
            var path = "/activities?state=" + PushWardRequest.escapePathSegment(state) + "&limit=100"
            if let after { path += "&after=" + PushWardRequest.escapePathSegment(after) }
            guard let urlRequest = baseRequest(method: "GET", path: path) else { return nil }
            guard case .answered(let status, let body, _) = await exchange(urlRequest, gate: gate),
                (200..<300).contains(status),
                let page = try? JSONValue(parsing: body)
            else { return nil }
            slugs += (page["items"]?.arrayValue ?? []).compactMap { $0["slug"]?.stringValue }
            guard let next = page["next_cursor"]?.stringValue, !next.isEmpty else { return slugs }
            after = next
        }
        return slugs
    }

    /// `POST /notifications`: an alert. The 201's `id`, `delivery` and `reason` are read when
    /// present; a 2xx whose body says nothing of them is still sent. A `gate` works as in `send`.
    public func notify(_ body: JSONValue, gate: SendGate? = nil) async -> NotificationAnswer {
        guard var urlRequest = baseRequest(method: "POST", path: "/notifications") else {
            return .noAnswer(reason: "cannot build a URL from \(configuration.baseURL)/notifications")
        }
        urlRequest.setBody(body.canonicalData, gatedBy: gate)
        urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        switch await exchange(urlRequest, gate: gate) {
        case .failed(let reason):
            return .noAnswer(reason: reason)
        case .answered(let status, let data, _) where (200..<300).contains(status):
            let answer = (try? JSONValue(parsing: data))?.objectValue ?? [:]
            return .sent(
                status: status, id: answer["id"]?.intValue.map(Int64.init), delivery: answer["delivery"]?.stringValue,
                reason: answer["reason"]?.stringValue)
        case .answered(let status, let data, let retryAfter):
            return .problem(ProblemDecoder.decode(status: status, body: data, retryAfterHeader: retryAfter))
        }
    }

    /// `GET /auth/me`: what the key's account has spent this period. PushWard charges nothing for
    /// it, so it can be asked before every plan; a 2xx whose body is not a usage document is
    /// `unreadable`, never a guess. A `gate` is asked just before the request starts.
    public func usage(gate: SendGate? = nil) async -> PushWardUsageAnswer {
        guard let urlRequest = usageURLRequest() else {
            return .noAnswer(reason: "cannot build a URL from \(configuration.baseURL)/auth/me")
        }
        switch await exchange(urlRequest, gate: gate) {
        case .failed(let reason):
            return .noAnswer(reason: reason)
        case .answered(let status, let body, _) where (200..<300).contains(status):
            switch PushWardUsage.decode(body) {
            case .success(let usage): return .usage(usage)
            case .failure(let error): return .unreadable(status: status, error)
            }
        case .answered(let status, let body, let retryAfter):
            return .problem(ProblemDecoder.decode(status: status, body: body, retryAfterHeader: retryAfter))
        }
    }

    /// Why a request the gate refused got no answer.
    static let withheld = "withheld: the instance may no longer lead"

    /// What one HTTP exchange gave: a status with its body and `Retry-After`, or why nothing usable
    /// came back.
    private enum Exchange {
        case answered(status: Int, body: Data, retryAfter: String?)
        case failed(reason: String)
    }

    /// Carries out one request. Every status is an answer (URLSession does not treat 4xx as an
    /// error either), except a redirect, which is refused. `gate` is asked here, right before the
    /// request starts, for a request without a gated body (a GET, a DELETE); one with a gated body
    /// asks it later still, as curl takes the body.
    private func exchange(_ urlRequest: URLRequest, gate: SendGate? = nil) async -> Exchange {
        if let gate, urlRequest.httpBodyStream == nil, !gate.allows() { return .failed(reason: Self.withheld) }
        do {
            // Not `session.data(for:)`: it can deadlock when the dispatcher is cancelled (see there).
            let (data, response) = try await session.dataCancellable(for: urlRequest)
            guard let http = response as? HTTPURLResponse else { return .failed(reason: "not an HTTP response") }
            if (300..<400).contains(http.statusCode) {
                // Never followed (`ClientSessionDelegate`): the request would carry the API key to wherever
                // the Location points. It is retried like a lost answer, and the reason says what to fix.
                let location = http.value(forHTTPHeaderField: "Location").map { " to \($0.prefix(200))" } ?? ""
                return .failed(
                    reason: "PushWard answered \(http.statusCode), a redirect\(location), which the bridge does not "
                        + "follow with the API key: set pushward.url to the address the API answers at")
            }
            return .answered(
                status: http.statusCode, body: data, retryAfter: http.value(forHTTPHeaderField: "Retry-After"))
        } catch  where gate?.refused == true {
            return .failed(reason: Self.withheld)
        } catch let error as URLError {
            return .failed(reason: "\(error.code.description): \(error.localizedDescription)")
        } catch {
            return .failed(reason: "\(error)")
        }
    }
}

extension URLError.Code {
    fileprivate var description: String {
        switch self {
        case .timedOut: "timed out"
        case .cannotConnectToHost: "connection refused"
        case .networkConnectionLost: "connection lost"
        case .cannotFindHost: "host not found"
        case .secureConnectionFailed: "TLS failed"
        default: "URL error \(rawValue)"
        }
    }
}
