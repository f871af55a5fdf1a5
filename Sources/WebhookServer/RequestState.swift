import Foundation

/// The per-request box libmicrohttpd carries in `*con_cls` between the calls of one request: the
/// request line and headers seen so far, and the body as it accumulates.
///
/// Ownership: created retained (`Unmanaged.passRetained`) by the URI callback, or by the access
/// handler if that never ran; released exactly once by the request-completed callback, which
/// libmicrohttpd calls for every request whose URI it reported — including requests it answers
/// itself (headers too large) or that die half-way (timeout, client gone). The callback also
/// nils `*con_cls`, so a second completion notice could not release it twice.
///
/// Not `Sendable` and not locked: libmicrohttpd handles one connection on one thread at a time, so
/// only one callback touches a given request's state at once.
final class RequestState {
    private let context: ServerContext

    /// The raw request target from the request line (`/webhook?x=1`), before decoding.
    var target: String?
    var method = ""
    var headers: [String: String] = [:]
    var remoteAddress: String?
    var body = Data()
    /// The size of the header block as sent: each `Name: value` line with its CRLF.
    var headerBytes = 0

    /// False until the first access-handler call (headers complete) has been processed.
    var headersProcessed = false
    /// Set once the body is known to exceed the limit; the rest of the upload is then read and
    /// dropped, and the request is answered 413.
    var bodyTooLarge = false
    /// Set once the body did not fit the server's budget for unverified bodies; the rest of the
    /// upload is read and dropped, and the request is answered 503.
    var overBudget = false
    /// Bytes of the server's body budget this request holds (its body so far), given back when
    /// the body goes to the handler or the request ends.
    var reservedBodyBytes = 0

    /// Set when the request went to the handler; its answer arrives through it.
    var responder: HTTPResponder? {
        didSet { if oldValue == nil, responder != nil { handed = true } }
    }
    private var handed = false

    init(context: ServerContext) {
        self.context = context
        context.requestStateCreated()
    }

    /// Gives the request's share of the body budget back.
    func releaseBodyBudget() {
        context.releaseBody(reservedBodyBytes)
        reservedBodyBytes = 0
    }

    deinit {
        context.releaseBody(reservedBodyBytes)
        if handed { context.handedRequestFinished() }
        context.requestStateDestroyed()
    }

    /// Adds one received header, joining repeats with ", " as RFC 9110 allows for list headers.
    func addHeader(name: String, value: String) {
        headerBytes += name.utf8.count + value.utf8.count + 4
        let key = name.lowercased()
        if let existing = headers[key] {
            headers[key] = existing + ", " + value
        } else {
            headers[key] = value
        }
    }

    /// The finished request, with the target split at the first `?`.
    func makeRequest(fallbackPath: String) -> HTTPRequest {
        var path = fallbackPath
        var query: String?
        if let target {
            if let mark = target.firstIndex(of: "?") {
                path = String(target[..<mark])
                query = String(target[target.index(after: mark)...])
            } else {
                path = target
            }
        }
        var request = HTTPRequest(method: method, path: path, query: query, body: body, remoteAddress: remoteAddress)
        request.headers = headers
        return request
    }
}
