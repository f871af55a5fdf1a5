import BridgeCore
import Foundation
import WebhookServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The request GitHub would send for `event`: `POST /webhook` on a loopback `port`, with the event name,
/// a delivery id and the body signed with `secret`. One builder for every end-to-end test that delivers.
public enum SignedDelivery {
    public static func request(
        _ event: WebhookEvent, port: Int, secret: String, id: String = UUID().uuidString,
        timeout: TimeInterval = 60
    ) -> URLRequest {
        let (name, body) = PayloadEncoder.encode(event)
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/webhook")!, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(name, forHTTPHeaderField: "X-GitHub-Event")
        request.setValue(id, forHTTPHeaderField: "X-GitHub-Delivery")
        request.setValue(WebhookSignature.sign(body: body, secret: secret), forHTTPHeaderField: "X-Hub-Signature-256")
        return request
    }
}
