import BridgeCore
import BridgeTestSupport
import PushWardClient
import Testing

/// What the client reads of preemption: a PATCH answer's `state`, and the free list of the key's
/// preempted activities. Against the fake PushWard, which evicts as PushWard does.
@Suite("Reading preempted")
struct PreemptedReadTests {
    static func start(_ slug: String, priority: Int) -> [PushWardRequest] {
        [
            PushWardRequest(
                method: .post, slug: slug,
                body: ["slug": .string(slug), "name": "Card", "priority": .number(Double(priority))]),
            PushWardRequest(
                method: .patch, slug: slug,
                body: ["state": "ongoing", "content": ["template": "generic", "progress": 0.5, "state": "Build"]]),
        ]
    }

    @Test("a sixth card going ongoing evicts the lowest-priority one: its PATCH answer and the list say preempted")
    func preemptedIsRead() async throws {
        let fake = try FakePushWardServer()
        let client = GatedSendTests.client(fake)
        for index in 1...5 {
            for request in Self.start("gh-card-\(index)", priority: index == 3 ? 0 : 2) {
                _ = await client.send(request)
            }
        }
        #expect(await client.activitySlugs(state: "preempted") == [])
        var answers: [PushWardAnswer] = []
        for request in Self.start("gh-card-6", priority: 2) { answers.append(await client.send(request)) }
        #expect(answers.last == .success(status: 200, state: "ongoing"))
        #expect(await client.activitySlugs(state: "preempted") == ["gh-card-3"])
        #expect(Set(await client.activitySlugs(state: "ongoing") ?? []).count == 5)
        // A PATCH that says its state restarts the preempted card; the answer says so.
        let restart = PushWardRequest(method: .patch, slug: "gh-card-3", body: ["state": "ongoing", "priority": 5])
        #expect(await client.send(restart) == .success(status: 200, state: "ongoing"))
        #expect(await client.activitySlugs(state: "preempted")?.count == 1)
        #expect(fake.violations.isEmpty, "\(fake.violations)")
    }

    @Test("no usable answer gives nil, not an empty list")
    func unreachable() async {
        let client = PushWardClient(
            configuration: .init(baseURL: "http://127.0.0.1:9", apiKey: "hlk_test", timeout: 2, version: "test"))
        #expect(await client.activitySlugs(state: "preempted") == nil)
    }
}
