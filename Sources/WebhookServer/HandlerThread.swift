#if canImport(Glibc)
    import Glibc
#endif

/// Marks the thread running a server's handler, so that `HTTPServer.stop()` called from inside one
/// is recognised. That happens without anyone writing it: an owner whose `deinit` stops its server
/// (the test fakes do) is released on a libmicrohttpd thread when a handler held the last reference,
/// and `MHD_stop_daemon` on a thread of the same daemon joins itself (libmicrohttpd aborts).
enum HandlerThread {
    /// The server context whose handler this thread is running, if any; one slot per thread.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    /// Runs `body` (a call of `context`'s handler) with this thread marked as running it.
    static func run<Result>(for context: AnyObject, _ body: () -> Result) -> Result {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(context).toOpaque())
        defer { pthread_setspecific(key, previous) }
        return body()
    }

    /// Whether this thread is inside a call of `context`'s handler.
    static func isRunning(for context: AnyObject) -> Bool {
        pthread_getspecific(key) == Unmanaged.passUnretained(context).toOpaque()
    }
}
