import BridgeCore
import BridgeTestSupport
import Foundation
import HTTPClientSupport
import PushWardClient
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request gated by `SendGate` is asked about as its body is handed to the connection, the last
/// moment before PushWard has it: an instance that stopped leading while frozen after planning a
/// request must not send it once resumed. Against the fake PushWard on loopback: what an allowed
/// request looks like on the wire, and that a refused one never reaches the server whole.
@Suite("Gated sends")
struct GatedSendTests {
    /// Hostile, multi-byte names: `Content-Length` counts bytes, not characters.
    static let name = "deploy \u{202E}gnp.exe\u{0} 🚀 \u{FEFF}"

    static func client(_ fake: FakePushWardServer) -> PushWardClient {
        PushWardClient(configuration: .init(baseURL: fake.baseURL, apiKey: fake.apiKey, timeout: 5, version: "test"))
    }

    static let create = PushWardRequest(
        method: .post, slug: "gh-gated", body: ["slug": "gh-gated", "name": .string(name), "priority": 5])
    static let start = PushWardRequest(
        method: .patch, slug: "gh-gated",
        body: [
            "state": "ongoing",
            "content": [
                "template": "generic", "progress": 0.5, "state": .string(name), "subtitle": .string(name),
                "url": .string(
                    "https://github.com/acme/widgets/actions/runs/9000?" + String(repeating: "q=é&", count: 200)),
            ],
        ])

    /// How often a gate was asked.
    final class Asks: Sendable {
        private let count = Atomic<Int>(0)
        func next() -> Int { count.add(1, ordering: .relaxed).oldValue }
        var total: Int { count.load(ordering: .relaxed) }
    }

    /// A gate that allows its first `allowed` asks and refuses every one after, counting them.
    static func gate(allowing allowed: Int) -> (SendGate, Asks) {
        let asks = Asks()
        return (SendGate { asks.next() < allowed }, asks)
    }

    @Test("an allowed request goes out as an ungated one does: the same bytes, Content-Length, never chunked")
    func allowedMatchesUngated() async throws {
        let fake = try FakePushWardServer()
        let client = Self.client(fake)
        let (gate, asks) = Self.gate(allowing: .max)
        #expect(await client.send(Self.create, gate: gate) == .success(status: 201))
        #expect(await client.send(Self.start, gate: gate) == .success(status: 200, state: "ongoing"))
        #expect(asks.total == 2, "asked once per request, as its body went out")
        #expect(!gate.refused)
        // The same two, ungated, for comparison.
        #expect(await client.send(Self.create) == .success(status: 201))
        #expect(await client.send(Self.start) == .success(status: 200, state: "ongoing"))

        let requests = fake.requests
        try #require(requests.count == 4)
        for (gated, plain) in [(requests[0], requests[2]), (requests[1], requests[3])] {
            #expect(gated.method == plain.method && gated.path == plain.path)
            #expect(gated.body == plain.body)
            #expect(gated.headers["content-length"] == plain.headers["content-length"])
            #expect(gated.headers["content-type"] == plain.headers["content-type"])
            #expect(gated.headers["transfer-encoding"] == nil, "\(gated.headers)")
        }
        // curl may add `Expect: 100-continue` to a body whose length it does not know (a stream's),
        // which holds each request up to a second on a server that does not answer it: none is sent,
        // a body over 1 KB included.
        for request in requests { #expect(request.headers["expect"] == nil, "\(request.headers)") }
        let bytes = Self.start.body.canonicalData.count
        #expect(bytes > 1_024)
        #expect(requests[1].headers["content-length"] == String(bytes))
        #expect(bytes > Self.start.body.canonicalString.count, "the name is multi-byte, so bytes were counted")
        #expect(fake.violations.isEmpty, "\(fake.violations)")
    }

    @Test("allowed when planned, refused as the body goes out: PushWard receives nothing, the answer says withheld")
    func refusedAtTheBody() async throws {
        let fake = try FakePushWardServer()
        let client = Self.client(fake)
        #expect(await client.send(Self.create) == .success(status: 201))

        // The dispatcher's own ask, before the request starts, is the first; a freeze then lets the
        // lead lapse, and the ask as curl takes the body is refused.
        let (gate, asks) = Self.gate(allowing: 1)
        #expect(gate.allows())
        let answer = await client.send(Self.start, gate: gate)
        guard case .noAnswer(let reason) = answer else {
            Issue.record("answered \(answer)")
            return
        }
        #expect(reason.contains("withheld"), "\(reason)")
        #expect(gate.refused)
        #expect(asks.total == 2)

        // The connection and the fake are fine: the next request goes, and only the POST and it
        // ever reached the server.
        #expect(await client.send(Self.start, gate: SendGate { true }) == .success(status: 200, state: "ongoing"))
        try await Task.sleep(for: .milliseconds(200))
        #expect(fake.requests.map(\.method) == ["POST", "PATCH"], "\(fake.requests.map(\.path))")
        #expect(fake.activities["gh-gated"]?.state == "ongoing")
    }

    @Test("a notification is gated the same way")
    func notificationGated() async throws {
        let fake = try FakePushWardServer()
        let client = Self.client(fake)
        let body: JSONValue = ["title": .string(Self.name), "body": "CI failed on main"]
        let (refusing, _) = Self.gate(allowing: 0)
        guard case .noAnswer = await client.notify(body, gate: refusing) else {
            Issue.record("a refused notification got an answer")
            return
        }
        #expect(refusing.refused)
        #expect(fake.requests.isEmpty)
        guard case .sent = await client.notify(body, gate: SendGate { true }) else {
            Issue.record("an allowed notification was not sent: \(fake.requests.map(\.status))")
            return
        }
        #expect(fake.acceptedNotifications.count == 1)
    }

    @Test("curl sending again on a new connection gets the whole body again, asked again")
    func replayedBody() throws {
        let fake = try FakePushWardServer()
        let client = Self.client(fake)
        let (gate, asks) = Self.gate(allowing: 2)
        let request = try #require(client.urlRequest(for: Self.start, gate: gate))
        let session = URLSession(configuration: .ephemeral)
        let task = session.dataTask(with: request)
        defer { session.invalidateAndCancel() }

        let delegate = ClientSessionDelegate()
        for attempt in 1...3 {
            nonisolated(unsafe) var replayed: InputStream?
            delegate.urlSession(session, task: task) { replayed = $0 }
            let stream = try #require(replayed, "attempt \(attempt)")
            stream.open()
            var buffer = [UInt8](repeating: 0, count: 16_384)
            let read = stream.read(&buffer, maxLength: buffer.count)
            if attempt <= 2 {
                #expect(Data(buffer.prefix(max(read, 0))) == Self.start.body.canonicalData, "attempt \(attempt)")
            } else {
                #expect(read == -1, "the third ask is refused, so the replay sends nothing")
            }
            stream.close()
        }
        #expect(asks.total == 3)

        // An ungated body (the GitHub client's GETs, a single instance) has nothing to replay.
        let plain = session.dataTask(with: try #require(client.urlRequest(for: Self.start)))
        nonisolated(unsafe) var none: InputStream? = InputStream(data: Data())
        delegate.urlSession(session, task: plain) { none = $0 }
        #expect(none == nil)
    }
}
