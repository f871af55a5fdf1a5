import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSession {
    /// What `data(for:)` does, without its deadlock on Linux when the calling task is cancelled
    /// (swift-corelibs-foundation#5412, fixed upstream by #5417 but not in the toolchain we build with).
    ///
    /// There, `data(for:)`'s cancellation handler calls `URLSessionTask.cancel()`, which waits for the
    /// session's work queue; the runtime runs that handler holding the cancelled task's status lock.
    /// Meanwhile the work queue, finishing the transfer, resumes the task and needs that very lock.
    /// The daemon's stop cancels the dispatcher with a push in flight, so `serve` could hang on
    /// SIGTERM; ThreadSanitizer's slowdown made the test suite hit it. Here the handler only hands
    /// the cancel to another thread, and the answer comes through the completion handler on the
    /// session's delegate queue, so neither side waits for the other while holding its lock.
    public func dataCancellable(for request: URLRequest) async throws -> (Data, URLResponse) {
        let handle = DataTaskHandle()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let data, let response {
                        continuation.resume(returning: (data, response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                handle.start(task)
            }
        } onCancel: {
            handle.cancel()
        }
    }
}

/// One request's data task, which cancellation may reach before it exists.
private final class DataTaskHandle: @unchecked Sendable {
    // `task` and `cancelled` are guarded by `lock`.
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    /// Resumes `task`, and cancels it at once if the caller was cancelled before it existed.
    func start(_ task: URLSessionDataTask) {
        let cancelledAlready = lock.withLock {
            self.task = task
            return cancelled
        }
        task.resume()
        if cancelledAlready { Self.cancelLater(task) }
    }

    /// Called with the task's status lock held: must not wait for the session (see above).
    func cancel() {
        let task = lock.withLock {
            cancelled = true
            return self.task
        }
        if let task { Self.cancelLater(task) }
    }

    private static func cancelLater(_ task: URLSessionDataTask) {
        DispatchQueue.global().async { task.cancel() }
    }
}
