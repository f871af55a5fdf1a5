import BridgeCore
import Foundation
import WebhookServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A loopback HTTP proxy in front of one fake (GitHub's API, PushWard), for one instance: each
/// instance is configured with its own proxy's address, so what reached the fake from which
/// instance is told apart by where it came through, whatever the requests look like. Only a
/// request that arrived whole (headers and body) is forwarded and counted: one whose body a
/// `SendGate` withheld never is.
final class CountingProxy: @unchecked Sendable {
    struct Forwarded: Sendable {
        var method: String
        var path: String
        var at: Date
    }

    private let target: String
    private let lock = NSLock()
    private var forwarded: [Forwarded] = []
    /// `holdNext(pathContaining:)`'s fragment, until a request matches it.
    private var holdFragment: String?
    private var holding = false
    private let released = DispatchSemaphore(value: 0)
    private var server: HTTPServer?
    private let session: URLSession

    /// `target`: the fake's base URL (`http://127.0.0.1:port`).
    init(target: String) throws {
        self.target = target
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        session = URLSession(configuration: configuration)
        var serverConfiguration = HTTPServer.Configuration(listen: "127.0.0.1:0")
        serverConfiguration.threadPoolSize = 8
        server = try HTTPServer(configuration: serverConfiguration) { [weak self] request in
            self?.forward(request) ?? HTTPResponse(status: 503)
        }
    }

    deinit { server?.stop() }

    var baseURL: String { "http://127.0.0.1:\(server?.port ?? 0)" }

    /// Every request forwarded, in the order they arrived.
    var requests: [Forwarded] { lock.withLock { forwarded } }

    /// Requests forwarded at or after `instant`.
    func count(since instant: Date) -> Int { requests.filter { $0.at >= instant }.count }

    /// Holds the next request whose path contains `fragment`, counted as arrived but not yet
    /// forwarded, until `release()`: the instance that sent it is then waiting for an answer, its
    /// request gone, so a test can freeze it at a moment that is not between a check and a send.
    func holdNext(pathContaining fragment: String) { lock.withLock { holdFragment = fragment } }

    /// Whether a request is held now (`holdNext`).
    var isHolding: Bool { lock.withLock { holding } }

    /// Lets the held request go on to the fake.
    func release() {
        let wasHolding = lock.withLock {
            defer { holding = false }
            return holding
        }
        if wasHolding { released.signal() }
    }

    /// Headers that describe this hop, set again by the client that forwards.
    private static let hopHeaders: Set<String> = ["host", "content-length", "transfer-encoding", "connection"]

    private func forward(_ request: HTTPRequest) -> HTTPResponse {
        let hold = lock.withLock {
            forwarded.append(Forwarded(method: request.method, path: request.path, at: Date()))
            guard let fragment = holdFragment, request.path.contains(fragment) else { return false }
            holdFragment = nil
            holding = true
            return true
        }
        if hold { released.wait() }
        let address = target + request.path + (request.query.map { "?" + $0 } ?? "")
        guard let url = URL(string: address) else { return HTTPResponse(status: 502) }
        var outgoing = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 10)
        outgoing.httpMethod = request.method
        for (name, value) in request.headers where !Self.hopHeaders.contains(name.lowercased()) {
            outgoing.setValue(value, forHTTPHeaderField: name)
        }
        if !request.body.isEmpty { outgoing.httpBody = request.body }
        let done = DispatchSemaphore(value: 0)
        let answer = Answer()
        session.dataTask(with: outgoing) { data, response, _ in
            if let http = response as? HTTPURLResponse {
                var headers: [(String, String)] = []
                for (name, value) in http.allHeaderFields {
                    guard let name = name as? String, let value = value as? String,
                        !Self.hopHeaders.contains(name.lowercased())
                    else { continue }
                    headers.append((name, value))
                }
                answer.response = HTTPResponse(status: http.statusCode, headers: headers, body: data ?? Data())
            }
            done.signal()
        }.resume()
        done.wait()
        return answer.response ?? HTTPResponse(status: 502)
    }

    private final class Answer: @unchecked Sendable {
        var response: HTTPResponse?
    }
}
