import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Refuses every HTTP redirect, so an `Authorization` header never goes to a host (or a plain-HTTP
/// address) the configuration does not name. The 3xx itself becomes the answer.
public final class RedirectRefusal: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    override public init() {}

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
