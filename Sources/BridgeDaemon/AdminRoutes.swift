import BridgeCore
import Foundation
import WebhookServer

/// The admin listener (`admin_listen`, loopback by default): `/metrics` in the Prometheus text
/// format. It is a separate listener so the public reverse proxy never exposes it; off loopback
/// it requires `Authorization: Bearer <admin_token>`.
public struct AdminRoutes: Sendable {
    public var service: BridgeService
    public var metrics: Metrics
    public var token: String?

    public init(service: BridgeService, metrics: Metrics, token: String?) {
        self.service = service
        self.metrics = metrics
        self.token = token
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        if let token {
            guard let given = request.header("authorization"), Self.constantTimeEqual(given, "Bearer " + token) else {
                var response = HTTPResponse.json(
                    401, ["error": "unauthorized", "detail": "send Authorization: Bearer <admin_token>"])
                response.headers.append(("WWW-Authenticate", "Bearer"))
                return response
            }
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = HTTPResponse.json(405, ["error": "method_not_allowed", "allow": "GET"])
            response.headers.append(("Allow", "GET"))
            return response
        }
        switch request.path {
        case "/metrics":
            let service = service
            let gauges = WebhookIngress.blocking { await service.gauges(at: Date().timeIntervalSince1970) }
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                body: Data(metrics.prometheusText(gauges: gauges).utf8))
        default:
            return .json(404, ["error": "not_found", "detail": "the admin listener serves /metrics"])
        }
    }

    /// Compares without an early exit, so the time taken says nothing about the token.
    static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        var difference = UInt8(left.count == right.count ? 0 : 1)
        for index in 0..<max(left.count, right.count) {
            difference |= (index < left.count ? left[index] : 0) ^ (index < right.count ? right[index] : 0)
        }
        return difference == 0
    }
}
