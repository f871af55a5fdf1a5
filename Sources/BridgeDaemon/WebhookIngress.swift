import BridgeCore
import Foundation
import WebhookServer

/// The webhook listener's routes: `POST /webhook`, `GET /healthz`, `GET /readyz`, nothing else.
///
/// It runs on libmicrohttpd's threads and never blocks them: a delivery is verified and decoded
/// there, then handed to the service, which answers it once its group has committed; meanwhile
/// the connection is suspended and the thread serves others. Nothing here ever waits on PushWard.
public struct WebhookIngress: Sendable {
    public var secrets: [String]
    public var service: BridgeService
    public var counters: Metrics
    public var logger: Logger
    public var clock: @Sendable () -> UnixTime

    public init(
        secrets: [String], service: BridgeService, counters: Metrics, logger: Logger,
        clock: @escaping @Sendable () -> UnixTime = { Date().timeIntervalSince1970 }
    ) {
        self.secrets = secrets
        self.service = service
        self.counters = counters
        self.logger = logger
        self.clock = clock
    }

    /// Answers one request through `respond`: at once for everything but a delivery that passed
    /// its checks, which is answered from the store's queue once its group has committed. Never
    /// blocks the calling thread.
    public func handle(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        guard request.path == "/webhook" else { return route(request, respond) }
        let started = DispatchTime.now().uptimeNanoseconds
        let counters = counters
        route(request) { response in
            counters.add("http_responses_total", labels: ["status": String(response.status)])
            counters.observe(
                "ack_latency_seconds", Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000_000)
            respond(response)
        }
    }

    private func route(_ request: HTTPRequest, _ respond: @escaping @Sendable (HTTPResponse) -> Void) {
        switch request.path {
        case "/webhook":
            guard request.method == "POST" else { return respond(methodNotAllowed(allow: "POST")) }
            webhook(request, respond)
        case "/healthz":
            guard request.method == "GET" || request.method == "HEAD" else {
                return respond(methodNotAllowed(allow: "GET"))
            }
            respond(.json(200, ["status": "ok"]))
        case "/readyz":
            guard request.method == "GET" || request.method == "HEAD" else {
                return respond(methodNotAllowed(allow: "GET"))
            }
            let service = service
            Task {
                let ready = await service.isReady()
                respond(
                    ready
                        ? .json(200, ["status": "ready"])
                        : .json(503, ["status": "not_ready", "detail": "the database does not take writes"]))
            }
        default:
            respond(
                .json(404, ["error": "not_found", "detail": "this listener serves POST /webhook, /healthz, /readyz"]))
        }
    }

    private func methodNotAllowed(allow: String) -> HTTPResponse {
        var response = HTTPResponse.json(405, ["error": "method_not_allowed", "allow": .string(allow)])
        response.headers.append(("Allow", allow))
        return response
    }

    private func webhook(_ request: HTTPRequest, _ respond: @escaping @Sendable (HTTPResponse) -> Void) {
        let deliveryID = request.header("x-github-delivery") ?? ""
        let event = request.header("x-github-event") ?? ""
        var metadata: [String: JSONValue] = ["github.delivery": .string(deliveryID), "github.event": .string(event)]
        if let remote = request.remoteAddress { metadata["http.remote"] = .string(remote) }

        let mediaType = request.header("content-type")?.split(separator: ";").first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard let mediaType, ["application/json", "application/x-www-form-urlencoded"].contains(mediaType) else {
            logger.warning("refused a delivery with an unsupported content type", metadata)
            return respond(
                .json(
                    415,
                    [
                        "error": "unsupported_media_type",
                        "detail":
                            "send application/json or application/x-www-form-urlencoded (the hook's content type)",
                    ]))
        }
        // The signature is checked before anything else reads the body: an unverified body is
        // never parsed, stored or logged.
        switch WebhookSignature.check(
            body: request.body, header: request.header("x-hub-signature-256"), secrets: secrets)
        {
        case .valid:
            break
        case .missing, .malformed, .mismatch:
            counters.add("signature_failures_total")
            logger.warning("refused a delivery whose signature does not verify", metadata)
            return respond(
                .json(
                    401,
                    [
                        "error": "invalid_signature",
                        "detail": "X-Hub-Signature-256 is missing or does not match any configured webhook secret",
                    ]))
        }
        guard !event.isEmpty, !deliveryID.isEmpty else {
            logger.warning("refused a delivery without X-GitHub-Event or X-GitHub-Delivery", metadata)
            return respond(
                .json(
                    400, ["error": "missing_header", "detail": "X-GitHub-Event and X-GitHub-Delivery are required"]))
        }
        let delivery = IncomingDelivery(
            id: deliveryID, event: event, hookID: request.header("x-github-hook-id"), contentType: mediaType,
            body: request.body, receivedAt: clock())
        // Decoded above (IncomingDelivery.init), on this thread; committed with whatever else
        // arrived meanwhile, and answered only after that commit.
        service.submit(delivery) { result in respond(.json(result.status, result.body)) }
    }

    /// Runs async work to completion from a thread that is not part of Swift's pool (libmicrohttpd's).
    static func blocking<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T {
        let semaphore = DispatchSemaphore(value: 0)
        let box = ResultBox<T>()
        Task {
            box.value = await operation()
            semaphore.signal()
        }
        semaphore.wait()
        // The task stored the value before it signalled.
        return box.value!
    }
}

/// Carries a value out of a task to a thread waiting on a semaphore; the semaphore orders the
/// write before the read.
private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
