import Foundation

/// What every libmicrohttpd callback of one daemon shares: the handler, the limits, the count of
/// live per-request states and the requests waiting for their handler's answer.
///
/// `RunningDaemon` keeps it alive for as long as the daemon runs and hands libmicrohttpd an
/// unretained pointer to it; its stop joins libmicrohttpd's threads before it can let go of it, so
/// no callback can outlive it, even when the server itself is released on one of those threads.
final class ServerContext: @unchecked Sendable {
    /// Called on libmicrohttpd's threads, once per complete request that passed the body limit;
    /// answers through the responder, then or later.
    let handler: @Sendable (HTTPRequest, HTTPResponder) -> Void
    /// The largest body, in bytes, handed to `handler`.
    let maxBodyBytes: Int
    /// The largest request line plus header block, in bytes, handed to `handler`.
    let maxHeaderBytes: Int

    /// The most body bytes requests not yet handed to `handler` may hold together; 0: no limit.
    let bodyBudget: Int
    let onBudgetRefusal: (@Sendable () -> Void)?
    /// Every open connection and its request's deadline (see `HTTPServer.Configuration.requestDeadline`).
    let deadlines: RequestDeadlines

    /// Guards the counts and `unanswered`; callbacks run on several pool threads at once.
    private let lock = NSLock()
    private var liveStates = 0
    private var heldBytes = 0
    /// Requests handed to the handler whose completion libmicrohttpd has not reported yet.
    private var handedStates = 0
    private var unanswered: [ObjectIdentifier: HTTPResponder] = [:]

    init(
        handler: @escaping @Sendable (HTTPRequest, HTTPResponder) -> Void, maxBodyBytes: Int, maxHeaderBytes: Int,
        bodyBudget: Int = 0, onBudgetRefusal: (@Sendable () -> Void)? = nil, requestDeadline: Int = 0,
        onDeadlineCut: (@Sendable (Int) -> Void)? = nil
    ) {
        self.handler = handler
        self.maxBodyBytes = maxBodyBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.bodyBudget = bodyBudget
        self.onBudgetRefusal = onBudgetRefusal
        self.deadlines = RequestDeadlines(seconds: requestDeadline, onCut: onDeadlineCut)
    }

    /// Body bytes held by requests not yet handed to the handler.
    var heldBodyBytes: Int {
        lock.withLock { heldBytes }
    }

    /// Whether `count` more bytes fit the budget now (nothing is taken).
    func bodyBudgetFits(_ count: Int) -> Bool {
        bodyBudget == 0 || lock.withLock { heldBytes + count <= bodyBudget }
    }

    /// Takes `count` bytes of the budget, or returns false and takes nothing when they do not fit.
    func reserveBody(_ count: Int) -> Bool {
        lock.withLock {
            guard bodyBudget == 0 || heldBytes + count <= bodyBudget else { return false }
            heldBytes += count
            return true
        }
    }

    /// Gives back bytes taken with `reserveBody`.
    func releaseBody(_ count: Int) {
        guard count > 0 else { return }
        lock.withLock { heldBytes -= count }
    }

    /// How many `RequestState`s exist: requests between their request line and their completion
    /// notice. Zero when idle; anything else at rest would be a leak.
    var liveRequestStates: Int {
        lock.withLock { liveStates }
    }

    func requestStateCreated() {
        lock.withLock { liveStates += 1 }
    }

    func requestStateDestroyed() {
        lock.withLock { liveStates -= 1 }
    }

    /// Requests handed to the handler and not finished: answered but not yet written count too.
    var handedRequests: Int {
        lock.withLock { handedStates }
    }

    func handing(_ responder: HTTPResponder) {
        lock.withLock {
            handedStates += 1
            unanswered[ObjectIdentifier(responder)] = responder
        }
    }

    func handedRequestFinished() {
        lock.withLock { handedStates -= 1 }
    }

    func responderAnswered(_ responder: HTTPResponder) {
        _ = lock.withLock { unanswered.removeValue(forKey: ObjectIdentifier(responder)) }
    }

    /// Answers every request still waiting for its handler (shutdown past its deadline), which
    /// resumes their connections: libmicrohttpd refuses to stop with a connection suspended.
    func answerAll(_ response: HTTPResponse) -> Int {
        let waiting = lock.withLock { Array(unanswered.values) }
        for responder in waiting { responder.respond(response) }
        return waiting.count
    }
}
