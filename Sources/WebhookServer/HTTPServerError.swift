/// Why an `HTTPServer` could not start. Each case names what the operator has to fix.
public enum HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The `listen` text is not `HOST:PORT` with an IP address (or `localhost`) and a port.
    case invalidListenAddress(text: String, reason: String)
    /// A configuration number is out of range (a negative limit, a zero thread pool, ...).
    case invalidConfiguration(String)
    /// libmicrohttpd refused to start: usually the address is in use or needs privileges.
    /// `errno` is the C error number seen right after the failure (0 when there was none).
    case startFailed(address: String, errno: Int32, message: String)

    public var description: String {
        switch self {
        case .invalidListenAddress(let text, let reason):
            return "invalid listen address \"\(text)\": \(reason)"
        case .invalidConfiguration(let detail):
            return "invalid HTTP server configuration: \(detail)"
        case .startFailed(let address, let errno, let message):
            return "cannot listen on \(address): \(message) (errno \(errno))"
        }
    }
}
