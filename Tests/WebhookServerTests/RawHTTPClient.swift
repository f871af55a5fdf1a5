import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A deliberately dumb HTTP/1.1 client on a BSD socket, for the tests that need to control the
/// bytes and their timing (half a request line, a lying `Content-Length`, a chunked upload, an
/// idle connection) — things URLSession will not do.
///
/// Every read waits at most `timeout` seconds, so a server bug fails the test instead of hanging it.
final class RawHTTPClient {
    struct Response {
        var status: Int
        /// Lowercased names; the last value wins (the tests never need repeats).
        var headers: [String: String]
        var body: Data

        var json: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        }
    }

    enum Failure: Error, CustomStringConvertible {
        case system(String, Int32)
        case closedEarly(Data)
        case timedOut(Data)
        case unparsable(Data)

        var description: String {
            switch self {
            case .system(let call, let code): return "\(call) failed: \(String(cString: strerror(code)))"
            case .closedEarly(let data): return "connection closed after \(data.count) bytes"
            case .timedOut(let data): return "timed out after \(data.count) bytes"
            case .unparsable(let data): return "cannot parse: \(String(decoding: data.prefix(200), as: UTF8.self))"
            }
        }
    }

    let fd: Int32
    let timeout: Double
    /// Bytes received but not yet consumed by a parse (keep-alive responses may arrive together).
    private var pending = Data()

    /// Connects to `host` (`127.0.0.1` or `::1`) on `port`, from the IPv4 address `source` when
    /// given (any of 127.0.0.0/8 routes to loopback on Linux, so one machine can play many
    /// clients for per-address limits).
    init(host: String = "127.0.0.1", port: Int, source: String? = nil, timeout: Double = 10) throws {
        self.timeout = timeout
        let ipv6 = host.contains(":")
        let socketFD = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw Failure.system("socket", errno) }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, source, &local.sin_addr)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                let code = errno
                close(socketFD)
                throw Failure.system("bind", code)
            }
        }
        var result: Int32
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard result == 0 else {
            let code = errno
            close(socketFD)
            throw Failure.system("connect", code)
        }
        fd = socketFD
    }

    deinit {
        close(fd)
    }

    func send(_ text: String) throws {
        try send(Data(text.utf8))
    }

    func send(_ data: Data) throws {
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < bytes.count {
                // MSG_NOSIGNAL: a server that closes early must fail the test, not kill the process.
                // baseAddress is non-nil: the loop only runs for a non-empty buffer.
                let sent = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if sent < 0 {
                    if errno == EINTR { continue }
                    throw Failure.system("send", errno)
                }
                offset += sent
            }
        }
    }

    /// Waits for bytes; returns an empty Data at end of stream. Throws on timeout or error.
    private func receiveSome() throws -> Data {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, Int32(timeout * 1000))
        if ready == 0 { throw Failure.timedOut(pending) }
        if ready < 0 { throw Failure.system("poll", errno) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(fd, &buffer, buffer.count, 0)
        if count < 0 {
            if errno == ECONNRESET { return Data() }
            throw Failure.system("recv", errno)
        }
        return Data(buffer[0..<count])
    }

    /// True when the server closed the connection (end of stream or reset) within `timeout`.
    func waitForClose() throws -> Bool {
        while true {
            let chunk = try receiveSome()
            if chunk.isEmpty { return true }
            pending.append(chunk)
        }
    }

    /// Reads one response (Content-Length or read-to-close bodies; the server never chunks ours).
    func readResponse() throws -> Response {
        let separator = Data("\r\n\r\n".utf8)
        while pending.range(of: separator) == nil {
            let chunk = try receiveSome()
            if chunk.isEmpty { throw Failure.closedEarly(pending) }
            pending.append(chunk)
        }
        // Checked by the loop above.
        let headerEnd = pending.range(of: separator)!
        let head = String(decoding: pending[pending.startIndex..<headerEnd.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure.unparsable(pending) }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        pending = Data(pending[headerEnd.upperBound...])
        let body: Data
        if let length = headers["content-length"].flatMap({ Int($0) }) {
            while pending.count < length {
                let chunk = try receiveSome()
                if chunk.isEmpty { throw Failure.closedEarly(pending) }
                pending.append(chunk)
            }
            body = Data(pending.prefix(length))
            pending = Data(pending.dropFirst(length))
        } else {
            while true {
                let chunk = try receiveSome()
                if chunk.isEmpty { break }
                pending.append(chunk)
            }
            body = pending
            pending = Data()
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// One complete request with `Connection: close`, and its response.
    static func request(
        host: String = "127.0.0.1",
        port: Int,
        source: String? = nil,
        timeout: Double = 10,
        method: String = "POST",
        target: String = "/webhook",
        headers: [(String, String)] = [],
        body: Data = Data()
    ) throws -> Response {
        let client = try RawHTTPClient(host: host, port: port, source: source, timeout: timeout)
        var head = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        try client.send(Data(head.utf8) + body)
        return try client.readResponse()
    }
}
