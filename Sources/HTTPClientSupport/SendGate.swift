import Synchronization

/// Whether a request may still go out, asked at the last moment before its body is handed to the
/// connection (`GatedBodyStream`), not only when the request was planned.
///
/// Several instances sharing one database fence their writes, but PushWard cannot fence a request:
/// a leader frozen (SIGSTOP, a stalled VM) between deciding to send and writing the request would,
/// once resumed, send a frame planned before another instance took over, and an `ongoing` frame
/// sent after the new leader's end starts the Live Activity again on every phone. Asked as curl
/// takes the body, the gate leaves only the instant between that read and the socket write open.
/// A request it refuses never reaches the server whole: at most its headers went out, which a
/// server discards when the connection closes before the body arrives.
public final class SendGate: Sendable {
    private let permits: @Sendable () -> Bool
    private let refusedOnce = Atomic<Bool>(false)

    /// `permits` is asked each time; it must be cheap and must not block (it runs on URLSession's
    /// work queue).
    public init(_ permits: @escaping @Sendable () -> Bool) {
        self.permits = permits
    }

    /// Asks now; a refusal is remembered (`refused`).
    public func allows() -> Bool {
        if permits() { return true }
        refusedOnce.store(true, ordering: .releasing)
        return false
    }

    /// True once the gate refused: the request was withheld, whatever error the transfer reports.
    public var refused: Bool { refusedOnce.load(ordering: .acquiring) }
}
