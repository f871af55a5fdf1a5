import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A listening Unix domain socket (`listen: "unix:/run/pushward-bridge/admin.sock"`), for the admin
/// listener: only processes that may open the socket file reach it, and no browser can, so neither
/// a token nor a DNS-rebinding page gets in. The file is made mode 0600 (the service's user only).
public enum UnixListenSocket {
    /// The prefix that marks a `listen` value as a socket path.
    public static let prefix = "unix:"

    /// The path of a `unix:PATH` listen value, or nil for `HOST:PORT`.
    public static func path(of listen: String) -> String? {
        listen.hasPrefix(prefix) ? String(listen.dropFirst(prefix.count)) : nil
    }

    /// Binds and listens on `path`, replacing a stale socket file left by an earlier run (never a
    /// file of another kind), and restricts it to `mode`. Returns the descriptor; the caller closes it.
    public static func bind(path: String, mode: mode_t = 0o600, backlog: Int32 = 64) throws(HTTPServerError) -> Int32 {
        var address = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let bytes = Array(path.utf8)
        guard path.hasPrefix("/"), !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
            throw .invalidListenAddress(
                text: prefix + path, reason: "the socket path must be absolute and shorter than \(capacity) bytes")
        }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        var status = stat()
        if lstat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFSOCK else {
                throw .startFailed(
                    address: prefix + path, errno: EEXIST, message: "a file that is not a socket is in the way")
            }
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw failure(path) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, length) }
        }
        // Connecting needs write permission on the file: the service's UMask (0077) already keeps
        // others out between bind and chmod; chmod makes it so whatever the umask.
        guard bound == 0, chmod(path, mode) == 0, listen(fd, backlog) == 0 else {
            let error = failure(path)
            close(fd)
            throw error
        }
        return fd
    }

    private static func failure(_ path: String) -> HTTPServerError {
        let code = errno
        return .startFailed(address: prefix + path, errno: code, message: String(cString: strerror(code)))
    }
}
