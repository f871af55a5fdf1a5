import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// `activity.template: generic` through the whole daemon over HTTP, against the fake PushWard
/// (which holds the generic template to its document: 422 for progress out of range, dates out of
/// order, a `live_progress` without an end date). The stored activity is checked at each stage.
@Suite("Generic template end to end", .serialized, .timeLimit(.minutes(2)))
struct GenericTemplateEndToEndTests {
    typealias Bridge = DispatchEndToEndTests.Bridge
    static let generic = #""activity": {"template": "generic", "completion_grace": "1h"},"#
    static let waves: [[RunScript.Job]] = [
        [RunScript.Job("lint", duration: 20)],
        [RunScript.Job("build (linux)", duration: 60), RunScript.Job("build (mac)", duration: 90)],
        [RunScript.Job("deploy", duration: 30)],
    ]

    static func card(_ fake: FakePushWardServer, slug: String) -> StoredActivity? { fake.activities[slug] }

    @Test("the recorded attempt 10: one bar from the first delivery to the end, every request valid")
    func recordedRun() async throws {
        let fake = try FakePushWardServer()
        let bridge = try Bridge(fake: fake, topLevel: Self.generic)
        let events = try DaemonEndToEndTests.attempt10Events()
        #expect(try await bridge.deliver(events[0]) == 202)
        #expect(
            await fake.until {
                fake.activities.values.contains { $0.state == "ongoing" && $0.content["template"] == "generic" }
            })
        let live = try #require(fake.activities.values.first { $0.content["template"] == "generic" })
        #expect(live.content["progress"]?.doubleValue.map { (0..<1).contains($0) } == true)
        #expect(live.content["current_step"] == nil && live.content["step_rows"] == nil)
        for event in events.dropFirst() { #expect(try await bridge.deliver(event) == 202) }
        #expect(
            await fake.until {
                fake.activities.values.contains { $0.state == "ended" && $0.content["template"] == "generic" }
            })
        let ended = try #require(fake.activities.values.first { $0.state == "ended" })
        #expect(ended.content["progress"] == 1)
        #expect(ended.content["end_date"] == nil && ended.content["live_progress"] == nil)
        #expect(ended.content["state"]?.stringValue?.isEmpty == false)
        #expect(fake.violations.isEmpty, "\(fake.violations)")
        await bridge.daemon.shutdown()
    }

    @Test("with history the bar counts down the whole run on the phone, and the end stops the count")
    func liveWindow() async throws {
        let fake = try FakePushWardServer()
        let bridge = try Bridge(fake: fake, topLevel: Self.generic)
        let slug = DispatchEndToEndTests.slug
        let now = Date().timeIntervalSince1970
        // An earlier run gives every step an estimate.
        let earlier = RunScript(runID: 1, runNumber: 1, start: now - 3_600, firstJobID: 100)
        for event in earlier.deliveries(waves: Self.waves) { #expect(try await bridge.deliver(event) == 202) }
        #expect(await DispatchEndToEndTests.eventually { Self.card(fake, slug: slug)?.state == "ended" })

        // The next run, delivered up to its first job's start: the phone gets the whole run's ETA.
        let script = RunScript(runID: 2, runNumber: 2, start: now - 5, firstJobID: 200)
        let events = script.deliveries(waves: Self.waves)
        let started = events.prefix(4)
        for event in started { #expect(try await bridge.deliver(event) == 202) }
        #expect(
            await DispatchEndToEndTests.eventually {
                Self.card(fake, slug: slug).map { $0.state == "ongoing" && $0.content["live_progress"] == true }
                    ?? false
            })
        let live = try #require(Self.card(fake, slug: slug))
        #expect(live.content["template"] == "generic")
        let end = try #require(live.content["end_date"]?.doubleValue)
        let start = try #require(live.content["start_date"]?.doubleValue)
        #expect(start < end)
        // The whole run of history: about 20 + 90 + 30 s, counted from the first job's start.
        #expect((100...160).contains(end - now), "ETA \(end - now) s from now")
        #expect(live.content["remaining_time"]?.intValue.map { (90...150).contains($0) } == true)

        for event in events.dropFirst(4) { #expect(try await bridge.deliver(event) == 202) }
        #expect(await DispatchEndToEndTests.eventually { Self.card(fake, slug: slug)?.state == "ended" })
        let ended = try #require(Self.card(fake, slug: slug))
        #expect(ended.content["progress"] == 1)
        #expect(ended.content["live_progress"] == nil && ended.content["end_date"] == nil)
        #expect(ended.content["remaining_time"] == nil)
        let finishing = fake.requests.last { $0.method == "PATCH" && $0.body?["content"]?["state"] != nil }
        #expect(finishing?.body?["content"]?["end_date"] == .null)
        #expect(finishing?.body?["content"]?["live_progress"] == .null)
        #expect(fake.violations.isEmpty, "\(fake.violations)")
        await bridge.daemon.shutdown()
    }
}
