#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a server listens: an IP address and a port, parsed from configuration text such as
/// `127.0.0.1:8080`, `0.0.0.0:8080`, `[::1]:8080`, `[::]:0` or `localhost:8080`.
///
/// Only literal addresses and `localhost` are accepted. Resolving other host names at start-up
/// would make the bound address depend on DNS and on which of several answers came first; an
/// operator who means "all interfaces" writes `0.0.0.0` or `[::]`.
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// The IP address part.
    public enum Host: Sendable, Hashable {
        /// Four bytes in network order.
        case ipv4(UInt8, UInt8, UInt8, UInt8)
        /// Sixteen bytes in network order.
        case ipv6([UInt8])
    }

    public var host: Host
    /// The TCP port; 0 asks the kernel for a free one (tests use it).
    public var port: UInt16

    public init(host: Host, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`, where HOST is a dotted IPv4 address, a bracketed IPv6 address or
    /// `localhost` (which means 127.0.0.1), and PORT is 0–65535 in decimal.
    public init(parsing text: String) throws(HTTPServerError) {
        func invalid(_ reason: String) -> HTTPServerError {
            .invalidListenAddress(text: text, reason: reason)
        }
        let hostText: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw invalid("missing \"]\" after the IPv6 address") }
            hostText = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw invalid("expected \":PORT\" after \"]\"") }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw invalid("expected HOST:PORT") }
            hostText = text[..<colon]
            portText = text[text.index(after: colon)...]
            if hostText.contains(":") {
                throw invalid("an IPv6 address must be written in brackets, as in [::1]:8080")
            }
        }
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
            let portNumber = Int(portText), portNumber <= Int(UInt16.max)
        else { throw invalid("the port must be a number from 0 to 65535") }
        guard !hostText.isEmpty else { throw invalid("the host is empty; use 0.0.0.0 or [::] for all interfaces") }

        let host: Host
        if text.hasPrefix("[") {
            guard let bytes = Self.parseIPv6(String(hostText)) else {
                throw invalid("\"\(hostText)\" is not an IPv6 address")
            }
            host = .ipv6(bytes)
        } else if hostText.lowercased() == "localhost" {
            host = .ipv4(127, 0, 0, 1)
        } else if let bytes = Self.parseIPv4(String(hostText)) {
            host = .ipv4(bytes[0], bytes[1], bytes[2], bytes[3])
        } else {
            throw invalid("\"\(hostText)\" is not an IP address; only IP addresses and localhost are accepted")
        }
        self.init(host: host, port: UInt16(portNumber))
    }

    /// True for `[::]`: the server then binds dual-stack, so IPv4 clients reach it too.
    public var isIPv6Unspecified: Bool {
        if case .ipv6(let bytes) = host { return bytes.allSatisfy { $0 == 0 } }
        return false
    }

    public var isIPv6: Bool {
        if case .ipv6 = host { return true }
        return false
    }

    /// `127.0.0.1:8080` or `[::1]:8080`: the canonical text, which parses back to the same value.
    public var description: String {
        switch host {
        case .ipv4(let a, let b, let c, let d):
            return "\(a).\(b).\(c).\(d):\(port)"
        case .ipv6(let bytes):
            var address = in6_addr()
            withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            let text = inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)).map { String(cString: $0) }
            return "[\(text ?? "?")]:\(port)"
        }
    }

    /// Calls `body` with this address as a `sockaddr_in` or `sockaddr_in6`, for `bind` or for
    /// libmicrohttpd's `MHD_OPTION_SOCK_ADDR`. The pointer is valid only inside `body`.
    public func withSocketAddress<Result>(
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Result
    ) rethrows -> Result {
        switch host {
        case .ipv4(let a, let b, let c, let d):
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: [a, b, c, d]) }
            return try withUnsafePointer(to: &address) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .ipv6(let bytes):
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: bytes) }
            return try withUnsafePointer(to: &address) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }

    /// Strict dotted quad: four decimal parts 0–255, no leading zeros (`010` is octal to some
    /// parsers and decimal to others, so it is refused rather than guessed).
    private static func parseIPv4(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isNumber }),
                part == "0" || !part.hasPrefix("0"), let value = UInt8(part)
            else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    /// Any IPv6 text `inet_pton` accepts (`::1`, `::`, `fe80::1`, `::ffff:1.2.3.4`). Zone ids
    /// (`%eth0`) are not accepted.
    private static func parseIPv6(_ text: String) -> [UInt8]? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }
}
