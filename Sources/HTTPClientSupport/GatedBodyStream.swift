import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request body that asks its `SendGate` as URLSession reads it: on Linux that read happens in
/// curl's read callback, right before the bytes are written to the connection, which is as late
/// as a check can be made without writing the HTTP client ourselves. A refusal fails the read, so
/// curl aborts the transfer with the body unsent.
///
/// Not for concurrent use: one transfer reads it, on URLSession's work queue.
final class GatedBodyStream: InputStream {
    let body: Data
    let gate: SendGate
    private var offset = 0
    private var status = Stream.Status.notOpen

    init(body: Data, gate: SendGate) {
        self.body = body
        self.gate = gate
        super.init(data: Data())
    }

    /// The same body from its first byte, for curl to send again on a new connection
    /// (`ClientSessionDelegate`'s `needNewBodyStream`); asks the gate again as it is read.
    func replay() -> GatedBodyStream {
        GatedBodyStream(body: body, gate: gate)
    }

    override func open() { status = .open }
    override func close() { status = .closed }
    override var streamStatus: Stream.Status { status }
    override var hasBytesAvailable: Bool { status == .open && offset < body.count }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        guard status == .open else { return status == .error ? -1 : 0 }
        // Asked once, before the first byte: a body is sent whole or not at all.
        if offset == 0, !gate.allows() {
            status = .error
            return -1
        }
        let count = min(length, body.count - offset)
        body.copyBytes(to: buffer, from: offset..<(offset + count))
        offset += count
        return count
    }
}

extension URLRequest {
    /// Sets `body` to be sent only if `gate` allows it as the body is handed to the connection.
    ///
    /// A streamed body has no length URLSession knows, so curl would send it chunked, and
    /// FoundationNetworking would send our `Content-Length` beside `Transfer-Encoding: chunked`, a
    /// request proxies reject. A `Transfer-Encoding` header of only a space is curl's way of saying
    /// "none of your own": it sends neither that header nor chunks, and the body goes with its
    /// `Content-Length` exactly as an in-memory body does.
    /// Without a gate, `body` is an ordinary in-memory body.
    public mutating func setBody(_ body: Data, gatedBy gate: SendGate?) {
        guard let gate else {
            httpBody = body
            return
        }
        httpBody = nil
        httpBodyStream = GatedBodyStream(body: body, gate: gate)
        setValue(String(body.count), forHTTPHeaderField: "Content-Length")
        setValue(" ", forHTTPHeaderField: "Transfer-Encoding")
    }
}
