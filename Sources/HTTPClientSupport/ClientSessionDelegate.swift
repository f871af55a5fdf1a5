import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session delegate every outgoing client shares:
///
/// - It refuses every HTTP redirect, so an `Authorization` header never goes to a host (or a
///   plain-HTTP address) the configuration does not name. The 3xx itself becomes the answer.
/// - It hands curl a gated body again from its first byte when curl must send a request once more
///   (a kept-alive connection the server had closed): without it the second attempt would go out
///   with its `Content-Length` and no body, and wait for its timeout.
public final class ClientSessionDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    override public init() {}

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        completionHandler((task.originalRequest?.httpBodyStream as? GatedBodyStream)?.replay())
    }
}
