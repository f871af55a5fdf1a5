import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// systemd socket activation: when started by a `.socket` unit, the listening socket arrives as
/// file descriptor 3 with `LISTEN_PID` = our pid and `LISTEN_FDS` ≥ 1.
public enum SocketActivation {
    public static let firstDescriptor: Int32 = 3

    /// The inherited listening sockets (the first is the webhook listener); empty when not
    /// socket-activated.
    public static func descriptors(environment: [String: String] = ProcessInfo.processInfo.environment) -> [Int32] {
        guard let pid = environment["LISTEN_PID"].flatMap(Int32.init), pid == getpid(),
            let count = environment["LISTEN_FDS"].flatMap(Int32.init), count > 0
        else { return [] }
        let descriptors = (0..<count).map { firstDescriptor + $0 }
        // Children (none today) must not inherit them.
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        return descriptors
    }
}
