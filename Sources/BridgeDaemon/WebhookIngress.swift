import BridgeCore
import Foundation
import WebhookServer

/// The webhook listener's routes: `POST /webhook`, `GET /healthz`, `GET /readyz`, and with
/// `actions` `POST /actions/{token}` (`ActionDesk`), nothing else.
///
/// It runs on libmicrohttpd's threads and never blocks them: a delivery is verified and decoded
/// there, then handed to the service, which answers it once its group has committed; meanwhile
/// the connection is suspended and the thread serves others. Nothing here ever waits on PushWard.
public struct WebhookIngress: Sendable {
    public var secrets: [String]
    public var service: BridgeService
    public let counters: Metrics
    public let logger: Logger
    public var clock: @Sendable () -> UnixTime
    /// `POST /actions/{token}`, when the `actions` section is on.
    public var actions: ActionDesk?
    /// The lines of refused requests (401, 415, 400, unknown routes): one a second of each kind,
    /// with the count of those folded into it, since anyone who reaches the listener causes them.
    let refusals: RefusalLog

    public init(
        secrets: [String], service: BridgeService, counters: Metrics, logger: Logger,
        clock: @escaping @Sendable () -> UnixTime = { Date().timeIntervalSince1970 }
    ) {
        self.secrets = secrets
        self.service = service
        self.counters = counters
        self.logger = logger
        self.clock = clock
        self.refusals = RefusalLog(logger: logger, counters: counters, kinds: Self.refusalKinds)
    }

    /// The kinds of `refusals`, the values of `log_lines_suppressed_total`'s `line` label.
    static let refusalKinds = [
        "unsupported_media_type", "invalid_signature", "missing_header", "invalid_header", "not_found",
        "unsupported_forge",
    ]

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
        if let actions, request.path.hasPrefix(ActionSettings.pathPrefix) {
            return actions.handle(request, respond: respond)
        }
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
            var metadata: [String: JSONValue] = ["http.path": .string(Self.loggable(request.path))]
            if let remote = request.remoteAddress { metadata["http.remote"] = .string(remote) }
            refusals.say(
                "not_found", .info, "refused a request for a path this listener does not serve", metadata, at: clock())
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
        // Until the signature verifies, these headers are anyone's words: logged cut short.
        var metadata: [String: JSONValue] = [
            "github.delivery": .string(Self.loggable(deliveryID)), "github.event": .string(Self.loggable(event)),
        ]
        if let remote = request.remoteAddress { metadata["http.remote"] = .string(remote) }

        let mediaType = request.header("content-type")?.split(separator: ";").first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard let mediaType, ["application/json", "application/x-www-form-urlencoded"].contains(mediaType) else {
            refusals.say(
                "unsupported_media_type", .warning, "refused a delivery with an unsupported content type", metadata,
                at: clock())
            return respond(
                .json(
                    415,
                    [
                        "error": "unsupported_media_type",
                        "detail":
                            "send application/json or application/x-www-form-urlencoded (the hook's content type)",
                    ]))
        }
        // Another forge's delivery is never verified with GitHub's secrets (it copies GitHub's
        // headers, so it could pass with a shared secret and then be misread as GitHub's).
        let forge = DeliveryForge(request)
        guard forge == .github else {
            metadata["forge"] = .string(forge.rawValue)
            refusals.say(
                "unsupported_forge", .warning,
                "refused a delivery from another forge: this bridge reads GitHub's webhooks only, and never verifies another forge's with GitHub's secrets; point the hook at a bridge for that forge or remove it",
                metadata, at: clock())
            return respond(
                .json(
                    400,
                    [
                        "error": "unsupported_forge", "forge": .string(forge.rawValue),
                        "detail": .string(
                            "a \(forge.name) delivery: this bridge reads GitHub's webhooks only, and never verifies "
                                + "another forge's with GitHub's secrets"),
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
            refusals.say(
                "invalid_signature", .warning, "refused a delivery whose signature does not verify", metadata,
                at: clock())
            return respond(
                .json(
                    401,
                    [
                        "error": "invalid_signature",
                        "detail": "X-Hub-Signature-256 is missing or does not match any configured webhook secret",
                    ]))
        }
        guard !event.isEmpty, !deliveryID.isEmpty else {
            refusals.say(
                "missing_header", .warning, "refused a delivery without X-GitHub-Event or X-GitHub-Delivery", metadata,
                at: clock())
            return respond(
                .json(
                    400, ["error": "missing_header", "detail": "X-GitHub-Event and X-GitHub-Delivery are required"]))
        }
        guard Self.isValidDeliveryID(deliveryID) else {
            refusals.say(
                "invalid_header", .warning, "refused a delivery whose X-GitHub-Delivery is not an id", metadata,
                at: clock())
            return respond(
                .json(
                    400,
                    [
                        "error": "invalid_header",
                        "detail": .string(
                            "X-GitHub-Delivery must be 1 to \(Self.maxDeliveryIDLength) characters of A-Z, a-z, 0-9, "
                                + "'.', '_' and '-' (GitHub sends a GUID)"),
                    ]))
        }
        let delivery = IncomingDelivery(
            id: deliveryID, event: event, hookID: Self.hookID(request.header("x-github-hook-id")),
            contentType: mediaType, body: request.body, receivedAt: clock(),
            bodyDigest: WebhookSignature.fingerprint(of: request.header("x-hub-signature-256")))
        // Decoded above (IncomingDelivery.init), on this thread; committed with whatever else
        // arrived meanwhile, and answered only after that commit.
        service.submit(delivery) { result in respond(.json(result.status, result.body)) }
    }

    /// `X-GitHub-Hook-ID` when it is what GitHub sends, a number of 1 to 20 digits; nil otherwise.
    /// The header is not covered by the signature, so anything else (5,010 characters with an
    /// escape sequence were once kept) is dropped rather than stored.
    public static func hookID(_ header: String?) -> String? {
        guard let header, (1...20).contains(header.utf8.count),
            header.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return header
    }

    /// The longest `X-GitHub-Delivery` accepted; GitHub's GUIDs have 36 characters.
    public static let maxDeliveryIDLength = 64
    /// The most characters of an unauthenticated header that reach a log line.
    public static let maxLoggedHeaderCharacters = 64

    /// A delivery id that can be stored, logged, put in a URL (`/api/deliveries/{id}`) and typed
    /// into `deliveries show` as it is: `[A-Za-z0-9._-]{1,64}`, checked per byte.
    public static func isValidDeliveryID(_ id: String) -> Bool {
        let bytes = id.utf8
        guard (1...maxDeliveryIDLength).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default: false
            }
        }
    }

    /// At most `maxLoggedHeaderCharacters` Unicode scalars of a header nobody vouched for, with `…`
    /// when cut: a 30 KB header must not become a 30 KB log line.
    public static func loggable(_ header: String) -> String {
        let scalars = header.unicodeScalars
        guard scalars.count > maxLoggedHeaderCharacters else { return header }
        var text = String.UnicodeScalarView(scalars.prefix(maxLoggedHeaderCharacters))
        text.append("…")
        return String(text)
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
