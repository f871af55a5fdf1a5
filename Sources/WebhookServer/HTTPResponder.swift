import CMicroHTTPD
import Foundation

/// Answers one request, from any thread, at any time after the handler was called.
///
/// A handler that cannot answer at once (the webhook waiting for its group commit) keeps the
/// responder and returns; the server then suspends the connection (`MHD_suspend_connection`), so
/// the polling thread goes on serving every other connection, and `respond` resumes it. No thread
/// is held per waiting request, and a slow commit cannot stall requests that share its thread.
public final class HTTPResponder: @unchecked Sendable {
    private let connection: OpaquePointer
    private let context: ServerContext
    // Guarded by `lock`: the handler's thread, the polling thread and `stop()` all touch them.
    private let lock = NSLock()
    private var response: HTTPResponse?
    private var suspended = false
    private var answered = false

    init(connection: OpaquePointer, context: ServerContext) {
        self.connection = connection
        self.context = context
    }

    /// Sends `response`. Only the first call counts; later ones (say, after the server answered
    /// 503 for a handler that missed the shutdown deadline) are ignored.
    public func respond(_ response: HTTPResponse) {
        lock.lock()
        guard !answered else {
            lock.unlock()
            return
        }
        answered = true
        self.response = response
        let resume = suspended
        suspended = false
        // Resumed under the lock, so `stop()` cannot slip between the decision and the call.
        if resume { MHD_resume_connection(connection) }
        lock.unlock()
        context.responderAnswered(self)
    }

    /// Right after the handler returned, on the polling thread: the answer if it is already
    /// there, else nil with the connection suspended until `respond` resumes it.
    func answerOrSuspend() -> HTTPResponse? {
        lock.lock()
        defer { lock.unlock() }
        if let response {
            self.response = nil
            return response
        }
        suspended = true
        MHD_suspend_connection(connection)
        return nil
    }

    /// When libmicrohttpd calls the access handler again after a resume: the answer to queue.
    func takeAnswer() -> HTTPResponse? {
        lock.withLock {
            let response = self.response
            self.response = nil
            return response
        }
    }
}
