import BridgeCore
import HTTPClientSupport
import PushWardClient

/// The one seam to PushWard: sends a request, says what came back. The dispatcher never sees
/// URLSession; tests and dry-run mode put their own behind it.
public protocol PushWardTransport: Sendable {
    /// True when nothing really leaves the process (dry-run mode): the push history says so.
    var isDryRun: Bool { get }
    /// Sends `request` unless `gate`, asked as late as the transport can, refuses it: then nothing
    /// reaches PushWard whole and `gate.refused` is true.
    func send(_ request: PushWardRequest, gate: SendGate?) async -> PushWardAnswer
    /// `POST /notifications` with `body`, gated like `send`.
    func notify(_ body: JSONValue, gate: SendGate?) async -> NotificationAnswer
    /// What the key's account has spent this period (`GET /auth/me`, free of quota), for the
    /// push-budget planner; not asked when `gate` refuses (then `gate.refused` is true).
    func usage(gate: SendGate?) async -> PushWardUsageAnswer
    /// The slugs of the key's activities in `state` (`GET /activities?state=`, free of quota);
    /// nil when nothing usable came back or `gate` refused a page.
    func activitySlugs(state: String, gate: SendGate?) async -> [String]?
}

/// Dry-run mode (no API key): every request is "acknowledged" at once, so cards move through
/// their lifecycle and the history shows exactly what would have been sent.
public struct DryRunTransport: PushWardTransport {
    public init() {}
    public var isDryRun: Bool { true }

    public func send(_ request: PushWardRequest, gate: SendGate?) async -> PushWardAnswer {
        guard gate?.allows() ?? true else { return .noAnswer(reason: "withheld") }
        switch request.method {
        case .post: return .success(status: 201)
        case .patch: return .success(status: 200)
        case .delete: return .success(status: 204)
        }
    }

    public func notify(_ body: JSONValue, gate: SendGate?) async -> NotificationAnswer {
        guard gate?.allows() ?? true else { return .noAnswer(reason: "withheld") }
        return .sent(status: 201, id: nil, delivery: nil, reason: nil)
    }

    /// Unlimited, nothing spent: nothing is counted anywhere, so the budget never holds a dry run
    /// back and the history shows every update a run would send.
    public func usage(gate: SendGate?) async -> PushWardUsageAnswer {
        guard gate?.allows() ?? true else { return .noAnswer(reason: "withheld") }
        return .usage(.unlimited)
    }

    /// Nothing was sent, so PushWard preempted nothing.
    public func activitySlugs(state: String, gate: SendGate?) async -> [String]? {
        guard gate?.allows() ?? true else { return nil }
        return []
    }
}

/// The real thing: PushWard's REST API over HTTPS.
public struct HTTPTransport: PushWardTransport {
    public let client: PushWardClient

    public init(client: PushWardClient) {
        self.client = client
    }

    public var isDryRun: Bool { false }

    public func send(_ request: PushWardRequest, gate: SendGate?) async -> PushWardAnswer {
        await client.send(request, gate: gate)
    }

    public func notify(_ body: JSONValue, gate: SendGate?) async -> NotificationAnswer {
        await client.notify(body, gate: gate)
    }

    public func usage(gate: SendGate?) async -> PushWardUsageAnswer {
        await client.usage(gate: gate)
    }

    public func activitySlugs(state: String, gate: SendGate?) async -> [String]? {
        await client.activitySlugs(state: state, gate: gate)
    }
}

extension PushWardTransport {
    /// Sends with nothing to ask first: one instance on SQLite, a benchmark, a test.
    public func send(_ request: PushWardRequest) async -> PushWardAnswer {
        await send(request, gate: nil)
    }

    /// For transports that stand in for activities only (tests): an alert gets no answer, so it
    /// stays pending and is retried, as it would be with PushWard unreachable.
    public func notify(_ body: JSONValue, gate: SendGate?) async -> NotificationAnswer {
        .noAnswer(reason: "this transport does not send notifications")
    }

    /// For transports that stand in for activities only (tests): no list, so the bridge keeps
    /// what the PATCH answers tell it.
    public func activitySlugs(state: String, gate: SendGate?) async -> [String]? { nil }

    /// Reads without a gate: one instance on SQLite, the `check` command, a test.
    public func usage() async -> PushWardUsageAnswer {
        await usage(gate: nil)
    }
}
