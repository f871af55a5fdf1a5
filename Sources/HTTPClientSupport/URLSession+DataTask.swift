import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSession {
    /// What `data(for:)` does, cancellable without ever calling `URLSessionTask.cancel()`, which
    /// on Linux both deadlocks and crashes.
    ///
    /// - The deadlock (swift-corelibs-foundation#5412, fixed upstream by #5417 but not in the
    ///   toolchain we build with): `data(for:)`'s cancellation handler calls `cancel()`, which waits
    ///   for the session's work queue while the runtime holds the cancelled task's status lock, and
    ///   the work queue, finishing the transfer, needs that lock. The daemon's stop cancels its
    ///   clients with requests in flight, so `serve` could hang on SIGTERM.
    /// - The crash: `cancel()` on a task that is just completing traps in FoundationNetworking
    ///   ("Trying to access a behaviour for a task that in not in the registry"), which a stop
    ///   during a GitHub sweep hit one run in three.
    ///
    /// So a cancelled caller is answered `CancellationError` at once, and the transfer is left to
    /// finish (or time out) on its own, its answer dropped. Whichever comes first resumes the
    /// caller; the other finds it resumed already.
    public func dataCancellable(for request: URLRequest) async throws -> (Data, URLResponse) {
        let handle = DataTaskHandle()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard handle.attach(continuation) else { return }
                dataTask(with: request) { data, response, error in
                    if let error {
                        handle.finish(.failure(error))
                    } else if let data, let response {
                        handle.finish(.success((data, response)))
                    } else {
                        handle.finish(.failure(URLError(.badServerResponse)))
                    }
                }.resume()
            }
        } onCancel: {
            handle.finish(.failure(CancellationError()))
        }
    }
}

/// The one continuation of a request, resumed by its answer or its cancellation, whichever is
/// first; cancellation may come before the continuation exists.
private final class DataTaskHandle: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<(Data, URLResponse), any Error>?
    private var early: Result<(Data, URLResponse), any Error>?
    private var done = false

    /// Keeps the continuation; false (and resumed already) when the caller was cancelled first.
    func attach(_ continuation: CheckedContinuation<(Data, URLResponse), any Error>) -> Bool {
        let result: Result<(Data, URLResponse), any Error>? = lock.withLock {
            if let early { return early }
            self.continuation = continuation
            return nil
        }
        guard let result else { return true }
        continuation.resume(with: result)
        return false
    }

    /// Resumes the caller with `result` unless something resumed it already.
    func finish(_ result: Result<(Data, URLResponse), any Error>) {
        let continuation: CheckedContinuation<(Data, URLResponse), any Error>? = lock.withLock {
            guard !done else { return nil }
            done = true
            guard let continuation = self.continuation else {
                early = result
                return nil
            }
            self.continuation = nil
            return continuation
        }
        continuation?.resume(with: result)
    }
}
