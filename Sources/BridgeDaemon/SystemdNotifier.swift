import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The few lines of the sd_notify protocol the daemon needs (`READY=1`, `STOPPING=1`,
/// `WATCHDOG=1`, `STATUS=…`), written to `$NOTIFY_SOCKET` as datagrams: no libsystemd needed.
/// Without `NOTIFY_SOCKET` (not started by systemd with `Type=notify`) every call does nothing.
public struct SystemdNotifier: Sendable {
    /// The socket path; a leading `@` names an abstract socket.
    public let socketPath: String?
    /// Half of `WATCHDOG_USEC`, when systemd asked for keep-alives; nil otherwise.
    public let watchdogInterval: Double?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        if let usec = environment["WATCHDOG_USEC"].flatMap(Double.init), usec > 0,
            environment["WATCHDOG_PID"].map({ Int32($0) == getpid() }) ?? true
        {
            watchdogInterval = usec / 1_000_000 / 2
        } else {
            watchdogInterval = nil
        }
    }

    /// Sends one state message; returns whether it was delivered (false without a socket).
    @discardableResult
    public func notify(_ state: String) -> Bool {
        guard let socketPath else { return false }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(socketPath.utf8)
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in pathBytes.enumerated() { buffer[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count + (pathBytes.first == 0 ? 0 : 1))
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                sendto(descriptor, message, message.count, Int32(MSG_NOSIGNAL), socketAddress, length)
            }
        }
        return sent == message.count
    }
}
