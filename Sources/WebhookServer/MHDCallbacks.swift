import BridgeCore
import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// libmicrohttpd's callbacks. They are top-level functions in a non-main file on purpose: a closure
// written in `main.swift` is main-actor isolated in Swift 6 and traps when libmicrohttpd calls it
// from its own threads. None of them captures anything; all state travels through the `void *`
// context pointers (`ServerContext`, unretained, for the daemon; `RequestState`, retained, per
// request).

/// `MHD_OPTION_URI_LOG_CALLBACK`: runs once per request, right after the request line, with the
/// raw target. Creates the request's state; its return value becomes `*con_cls`.
func pwbRequestStarted(
    _ context: UnsafeMutableRawPointer?,
    _ uri: UnsafePointer<CChar>?,
    _ connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    let server = Unmanaged<ServerContext>.fromOpaque(context).takeUnretainedValue()
    let state = RequestState(context: server)
    state.target = uri.map { String(cString: $0) }
    if let uri { skipArgumentParsing(uri) }
    return Unmanaged.passRetained(state).toOpaque()
}

/// Ends the query text in libmicrohttpd's read buffer right after its `?`, once the target has
/// been copied: the handlers read the query from that copy and never from libmicrohttpd's
/// argument table. libmicrohttpd 0.9.75 would otherwise store each `name=value` pair of the query
/// in the connection's memory pool, and a query of about a thousand pairs (`?a&a&a…`, some 6 KB,
/// well under the header limit) exhausts the pool: it then neither answers nor closes, and the
/// connection sits until the idle timeout. libmicrohttpd finds the `?` before it calls this
/// callback and writes into the same buffer itself right after, so the write is to its own
/// mutable buffer, inside the target it already measured.
private func skipArgumentParsing(_ uri: UnsafePointer<CChar>) {
    guard let mark = strchr(uri, CInt(UInt8(ascii: "?"))) else { return }
    let afterMark = UnsafeMutablePointer(mutating: mark) + 1
    afterMark.pointee = 0
}

/// `MHD_OPTION_NOTIFY_COMPLETED`: the request is over (answered, timed out, aborted, or the
/// daemon is stopping). Releases the state exactly once.
func pwbRequestCompleted(
    _ context: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ reason: MHD_RequestTerminationCode
) {
    if let context, let connection, let id = deadlineID(of: connection) {
        // A keep-alive connection's next request has its own deadline, from now.
        Unmanaged<ServerContext>.fromOpaque(context).takeUnretainedValue().deadlines.requestEnded(id)
    }
    guard let requestContext, let pointer = requestContext.pointee else { return }
    requestContext.pointee = nil
    Unmanaged<RequestState>.fromOpaque(pointer).release()
}

/// `MHD_OPTION_NOTIFY_CONNECTION`: a connection was accepted or is being closed. Registers it with
/// its socket for the request deadline, and unregisters it before libmicrohttpd closes the socket
/// (see `RequestDeadlines`). The id travels as the connection's socket context.
func pwbConnectionNotified(
    _ context: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ code: MHD_ConnectionNotificationCode
) {
    guard let context, let socketContext else { return }
    let server = Unmanaged<ServerContext>.fromOpaque(context).takeUnretainedValue()
    if pwb_connection_started(code) != 0 {
        guard let connection, case let fd = pwb_connection_fd(connection), fd >= 0 else { return }
        socketContext.pointee = UnsafeMutableRawPointer(bitPattern: server.deadlines.opened(fd: fd))
    } else if let id = socketContext.pointee {
        socketContext.pointee = nil
        server.deadlines.closed(Int(bitPattern: id))
    }
}

/// The id `pwbConnectionNotified` gave the connection, or nil.
private func deadlineID(of connection: OpaquePointer) -> Int? {
    pwb_connection_socket_context(connection).map { Int(bitPattern: $0) }
}

/// `MHD_KeyValueIterator` for `MHD_get_connection_values`: copies one header into the state.
func pwbCollectHeader(
    _ context: UnsafeMutableRawPointer?,
    _ kind: MHD_ValueKind,
    _ key: UnsafePointer<CChar>?,
    _ value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let context, let key else { return .YES }
    let state = Unmanaged<RequestState>.fromOpaque(context).takeUnretainedValue()
    state.addHeader(name: String(cString: key), value: value.map { String(cString: $0) } ?? "")
    return .YES
}

/// The access handler (`MHD_AccessHandlerCallback`). libmicrohttpd calls it for one request:
/// 1. once when the headers are complete (`*upload_data_size == 0`, state not yet processed):
///    collect the headers; answer 431 if they are over `maxHeaderBytes`, and 413 right away if
///    `Content-Length` is over `maxBodyBytes` — libmicrohttpd 0.9.75 cannot queue a response
///    while an upload is in progress, so this is the only moment a declared-too-large body can be
///    refused without reading it (libmicrohttpd then skips the body and closes the connection);
/// 2. once per piece of body (`*upload_data_size > 0`): append it, or drop it once over the limit
///    (a chunked upload has no declared length); the piece must be marked consumed;
/// 3. once more at the end (`*upload_data_size == 0`): run the handler, or answer 413; when the
///    handler has not answered by the time it returns, suspend the connection;
/// 4. after a resume (`HTTPResponder.respond`), once more: queue the handler's answer.
/// Every path that returns `MHD_YES` from step 1, 3 or 4 has queued exactly one response or
/// suspended the connection, and steps 1–2 that do not answer return `MHD_YES` without queuing.
func pwbHandleRequest(
    _ context: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?,
    _ version: UnsafePointer<CChar>?,
    _ uploadData: UnsafePointer<CChar>?,
    _ uploadDataSize: UnsafeMutablePointer<Int>?,
    _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let context, let connection, let uploadDataSize, let requestContext else { return .NO }
    let server = Unmanaged<ServerContext>.fromOpaque(context).takeUnretainedValue()

    let state: RequestState
    if let existing = requestContext.pointee {
        state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
    } else {
        // The URI callback always runs first in libmicrohttpd 0.9.75; this keeps the handler
        // correct should a version skip it. The completion callback releases it the same way.
        state = RequestState(context: server)
        requestContext.pointee = Unmanaged.passRetained(state).toOpaque()
    }

    if !state.headersProcessed {
        state.headersProcessed = true
        state.method = method.map { String(cString: $0) } ?? ""
        if state.target == nil, let url { state.target = String(cString: url) }
        _ = MHD_get_connection_values(
            connection, .HEADER_KIND, pwbCollectHeader, Unmanaged.passUnretained(state).toOpaque())
        state.remoteAddress = pwb_connection_client_address(connection).flatMap(socketAddressText)
        // The request line as sent: METHOD SP target SP HTTP/1.1 CRLF.
        let requestLineBytes = state.method.utf8.count + (state.target?.utf8.count ?? 0) + 12
        if requestLineBytes + state.headerBytes > server.maxHeaderBytes {
            requestArrived(connection, server)
            return queue(headersTooLarge(limit: server.maxHeaderBytes), on: connection)
        }
        if let declared = state.headers["content-length"].flatMap({ UInt64($0) }) {
            if declared > UInt64(server.maxBodyBytes) {
                state.bodyTooLarge = true
                requestArrived(connection, server)
                return queue(payloadTooLarge(limit: server.maxBodyBytes), on: connection)
            }
            // Reserve up front only what any client may cost: an unauthenticated sender that only
            // declares a large Content-Length must not make every connection hold 25 MB. Past
            // 1 MiB the buffer grows as bytes actually arrive. What is reserved counts against the
            // budget from now, and a body that cannot fit it now is refused before it is read.
            let upfront = Int(min(declared, 1 << 20))
            guard server.bodyBudgetFits(Int(declared)), server.reserveBody(upfront) else {
                state.overBudget = true
                server.onBudgetRefusal?()
                requestArrived(connection, server)
                return queue(bodyBudgetExhausted(), on: connection)
            }
            state.reservedBodyBytes = upfront
            state.body.reserveCapacity(upfront)
        }
        return .YES
    }

    let pieceSize = uploadDataSize.pointee
    if pieceSize > 0 {
        if !state.bodyTooLarge, !state.overBudget, let uploadData {
            if pieceSize > server.maxBodyBytes - state.body.count {
                state.bodyTooLarge = true
                state.body = Data()
                state.releaseBodyBudget()
            } else if case let needed = state.body.count + pieceSize - state.reservedBodyBytes, needed > 0,
                !server.reserveBody(needed)
            {
                state.overBudget = true
                state.body = Data()
                state.releaseBodyBudget()
            } else {
                state.reservedBodyBytes = max(state.reservedBodyBytes, state.body.count + pieceSize)
                UnsafeRawPointer(uploadData).withMemoryRebound(to: UInt8.self, capacity: pieceSize) {
                    state.body.append($0, count: pieceSize)
                }
            }
        }
        uploadDataSize.pointee = 0
        return .YES
    }

    // The whole request has arrived: from here it is the handler's or ours to answer, and its
    // deadline no longer applies.
    requestArrived(connection, server)
    if let responder = state.responder {
        // Called again after `HTTPResponder.respond` resumed the connection: queue its answer.
        let response =
            responder.takeAnswer()
            ?? .json(500, ["error": "internal_error", "detail": "the request was resumed without an answer"])
        return queue(response, on: connection)
    }
    if state.bodyTooLarge {
        return queue(payloadTooLarge(limit: server.maxBodyBytes), on: connection)
    }
    if state.overBudget {
        server.onBudgetRefusal?()
        return queue(bodyBudgetExhausted(), on: connection)
    }
    let request = state.makeRequest(fallbackPath: url.map { String(cString: $0) } ?? "/")
    state.body = Data()
    let responder = HTTPResponder(connection: connection, context: server)
    state.responder = responder
    server.handing(responder)
    HandlerThread.run(for: server) { server.handler(request, responder) }
    // The handler verified (or refused) the body before returning; from here it is the
    // handler's to hold, and it no longer counts against the budget for unverified bodies.
    state.releaseBodyBudget()
    // Answered already (a quick route): queue it now. Otherwise the connection is suspended until
    // the answer comes, and this thread serves other connections meanwhile.
    if let response = responder.answerOrSuspend() { return queue(response, on: connection) }
    return .YES
}

/// Stops the connection's request deadline: the request has arrived, or has been answered.
private func requestArrived(_ connection: OpaquePointer, _ server: ServerContext) {
    if let id = deadlineID(of: connection) { server.deadlines.requestArrived(id) }
}

/// The 431 answer for a header block over `maxHeaderBytes` that still fit libmicrohttpd's pool.
private func headersTooLarge(limit: Int) -> HTTPResponse {
    .json(
        431,
        [
            "error": "headers_too_large",
            "detail": .string("the request line and headers are larger than the limit of \(limit) bytes"),
            "limit_bytes": .number(Double(limit)),
        ])
}

/// The 503 answer for a body that does not fit the budget for unverified bodies: a moment later,
/// once the bodies ahead of it are verified or gone, it will.
private func bodyBudgetExhausted() -> HTTPResponse {
    var response = HTTPResponse.json(
        503,
        [
            "error": "busy",
            "detail": "the server holds as many unverified request bodies as it allows; retry shortly",
        ])
    response.headers.append(("Retry-After", "5"))
    return response
}

/// The 413 answer, also used when libmicrohttpd has not read the body at all.
private func payloadTooLarge(limit: Int) -> HTTPResponse {
    .json(
        413,
        [
            "error": "payload_too_large",
            "detail": .string("the request body is larger than the limit of \(limit) bytes"),
            "limit_bytes": .number(Double(limit)),
        ])
}

/// Hands `response` to libmicrohttpd. A status libmicrohttpd would refuse (outside 200–599; a
/// 1xx cannot be a final answer) becomes a 500, so a handler bug still produces one response.
/// Returns `MHD_NO`, which makes libmicrohttpd close the connection, only when libmicrohttpd
/// cannot allocate or queue the response.
private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
    var response = response
    if !(200...599).contains(response.status) {
        response = .json(
            500, ["error": "internal_error", "detail": .string("handler answered status \(response.status)")])
    }
    let created = response.body.withUnsafeBytes { bytes in
        // MUST_COPY: libmicrohttpd keeps its own copy, so the Swift buffer may go away now.
        MHD_create_response_from_buffer(
            bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let mhdResponse = created else { return .NO }
    defer { MHD_destroy_response(mhdResponse) }
    for (name, value) in response.headers {
        let lowered = name.lowercased()
        if lowered == "content-length" || lowered == "transfer-encoding" { continue }
        // MHD_NO here means a name or value with forbidden characters: the header is dropped.
        _ = MHD_add_response_header(mhdResponse, name, value)
    }
    return MHD_queue_response(connection, UInt32(response.status), mhdResponse)
}

/// `127.0.0.1` or `::1` for a peer address; an IPv4 client of a dual-stack socket arrives as
/// `::ffff:a.b.c.d` and is reported as `a.b.c.d`, so one client has one spelling in logs.
private func socketAddressText(_ address: UnsafePointer<sockaddr>) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
    switch Int32(address.pointee.sa_family) {
    case AF_INET:
        return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
            var raw = ipv4.pointee.sin_addr
            return inet_ntop(AF_INET, &raw, &buffer, socklen_t(buffer.count)).map { String(cString: $0) }
        }
    case AF_INET6:
        return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { ipv6 in
            var raw = ipv6.pointee.sin6_addr
            let bytes = withUnsafeBytes(of: &raw) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return "\(bytes[12]).\(bytes[13]).\(bytes[14]).\(bytes[15])"
            }
            return inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count)).map { String(cString: $0) }
        }
    default:
        return nil
    }
}
