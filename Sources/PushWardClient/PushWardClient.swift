import BridgeCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The PushWard REST client: sends one `PushWardRequest` and says what came back, never throwing.
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
        session = URLSession(configuration: sessionConfiguration)
    }

    /// The URLRequest for `request`: exposed so tests can check every header without a network.
    public func urlRequest(for request: PushWardRequest) -> URLRequest? {
        guard let url = URL(string: configuration.baseURL + request.path) else { return nil }
        var urlRequest = URLRequest(
            url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: configuration.timeout)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.httpBody = request.body.canonicalData
        urlRequest.setValue("Bearer " + configuration.apiKey, forHTTPHeaderField: "Authorization")
        urlRequest.setValue(
            request.method == .patch ? "application/merge-patch+json" : "application/json",
            forHTTPHeaderField: "Content-Type")
        urlRequest.setValue("application/json, application/problem+json", forHTTPHeaderField: "Accept")
        urlRequest.setValue(configuration.userAgent, forHTTPHeaderField: "User-Agent")
        return urlRequest
    }

    public func send(_ request: PushWardRequest) async -> PushWardAnswer {
        guard let urlRequest = urlRequest(for: request) else {
            return .noAnswer(reason: "cannot build a URL from \(configuration.baseURL)\(request.path)")
        }
        do {
            // Not `session.data(for:)`: it can deadlock when the dispatcher is cancelled (see there).
            let (data, response) = try await session.dataCancellable(for: urlRequest)
            guard let http = response as? HTTPURLResponse else { return .noAnswer(reason: "not an HTTP response") }
            if (200..<300).contains(http.statusCode) { return .success(status: http.statusCode) }
            return .problem(
                ProblemDecoder.decode(
                    status: http.statusCode, body: data, retryAfterHeader: http.value(forHTTPHeaderField: "Retry-After")
                ))
        } catch let error as URLError {
            return .noAnswer(reason: "\(error.code.description): \(error.localizedDescription)")
        } catch {
            return .noAnswer(reason: "\(error)")
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
