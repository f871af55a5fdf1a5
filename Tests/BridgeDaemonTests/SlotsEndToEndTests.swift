import BridgeCore
import BridgeDaemon
import BridgeTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// PushWard's five ongoing cards per person through the whole daemon, against the fake that
/// evicts the lowest-priority, then oldest, card for a sixth, as PushWard does.
@Suite("Slots end to end", .serialized, .timeLimit(.minutes(2)))
struct SlotsEndToEndTests {
    typealias Bridge = DispatchEndToEndTests.Bridge

    static let hostileRepository = "acme/\u{202E}evil\u{2066}repo\u{0000}👩🏽‍💻"
    static let hostileWorkflow = "CI \u{202E}gnp.exe\u{0007} 🚀" + String(repeating: "é", count: 300)

    static func script(_ index: Int, start: UnixTime) -> RunScript {
        let hostile = index == 12
        var script = RunScript(
            runID: 7_000 + index, runNumber: index, workflow: hostile ? hostileWorkflow : "CI",
            branch: index <= 7 ? "feature" : "main", start: start + Double(index), firstJobID: 70_000 + index * 10)
        script.repository = Repository(
            fullName: hostile ? hostileRepository : "acme/repo-\(index)",
            htmlURL: "https://github.com/acme/repo-\(index)", defaultBranch: "main")
        return script
    }

    static func slug(_ script: RunScript) -> String {
        ActivityIdentity.forRun(repository: script.repository, workflow: script.workflow, scope: .repository).slug
    }

    @Test("twelve repositories live at once: the failing and the waiting runs hold cards, the rest are counted")
    func twelveRepositories() async throws {
        let fake = try FakePushWardServer()
        let bridge = try Bridge(fake: fake)
        let start = Date().timeIntervalSince1970 - 600
        let scripts = (1...12).map { Self.script($0, start: start) }
        for script in scripts {
            #expect(try await bridge.deliver(script.run("in_progress", at: 0)) == 202)
            try await bridge.deliver(script.job(script.firstJobID, "build", "in_progress", createdAt: 0, startedAt: 0))
            try await bridge.deliver(
                script.job(script.firstJobID + 1, "lint", "in_progress", createdAt: 0, startedAt: 0))
            // One at a time, as a busy organisation's runs start: each card is decided as its run comes.
            try await Task.sleep(for: .milliseconds(150))
        }
        try await bridge.deliver(
            scripts[1].job(scripts[1].firstJobID + 2, "deploy", "waiting", createdAt: 20, environment: "production"))
        try await bridge.deliver(
            scripts[0].job(
                scripts[0].firstJobID, "build", "completed", createdAt: 0, startedAt: 0, completedAt: 30,
                conclusion: "failure"))
        let summarySlug = SummaryCard.slug(person: "")
        let failingSlug = Self.slug(scripts[0])
        let waitingSlug = Self.slug(scripts[1])
        func ongoing() -> Set<String> { Set(fake.activities.filter { $0.value.state == "ongoing" }.keys) }
        let peak = await DispatchEndToEndTests.eventually {
            let now = ongoing()
            return now.count == 5 && now.isSuperset(of: [summarySlug, failingSlug, waitingSlug])
                && fake.activities[summarySlug]?.content["subtitle"] == "+8 more runs"
        }
        #expect(peak, "ongoing: \(ongoing().sorted())")
        let port = bridge.daemon.adminPort
        var places: [Int: String] = [:]
        for script in scripts {
            let url = URL(string: "http://127.0.0.1:\(port)/api/runs/\(script.runID)")!
            let (data, _) = try await URLSession.shared.data(from: url)
            let document = try #require(try JSONValue(parsing: data).arrayValue?.first)
            places[script.runID] = document["placement"]?["place"]?.stringValue
        }
        let summaryContent = fake.activities[summarySlug]?.content ?? [:]
        let (page, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/")!)
        let html = String(decoding: page, as: UTF8.self)
        // The status page says, per run, whether it holds a card or is counted on the summary.
        #expect(html.contains("class=\"placement\" data-place=\"card\""))
        #expect(
            html.contains("class=\"placement\" data-place=\"summary\"") || html.contains("data-place=\"preempted\""))
        await bridge.daemon.shutdown()

        // The two other cards are default-branch runs; every run is on a card or on the summary.
        for slug in ongoing().subtracting([summarySlug, failingSlug, waitingSlug]) {
            let index = try #require(scripts.firstIndex { Self.slug($0) == slug })
            #expect(scripts[index].branch == "main")
        }
        #expect(places.count == 12)
        #expect(places.values.allSatisfy { ["card", "summary", "preempted"].contains($0) }, "\(places)")
        #expect(places.values.filter { $0 == "card" }.count == 4, "\(places)")
        // PushWard refused nothing, and evicted only cards the bridge had already given up: never
        // the summary, the failing or the waiting run's, and each at most once.
        let refused = fake.requests.filter { $0.status >= 400 }.map { "\($0.method) \($0.path) \($0.status)" }
        #expect(refused == [], "evictions: \(fake.evictions)")
        #expect(fake.violations.isEmpty, "\(fake.violations)")
        let evicted = fake.evictions.map(\.slug)
        #expect(!evicted.contains(summarySlug))
        #expect(Set(evicted).count == evicted.count, "\(evicted)")
        for eviction in fake.evictions where [failingSlug, waitingSlug].contains(eviction.slug) {
            // Preempted while they were still ranked like the others, before failing or waiting:
            // then restarted, and never evicted again.
            #expect(fake.evictions.last { $0.slug == eviction.slug }?.at == eviction.at)
        }
        #expect((fake.peakOngoing.values.max() ?? 0) <= 5)
        // The hostile names reach the summary as one plain line within the limit.
        if let state = summaryContent["state"]?.stringValue {
            #expect(state.unicodeScalars.count <= 256)
            #expect(!state.unicodeScalars.contains { [0x202E, 0x2066, 0x0000, 0x0007].contains($0.value) })
        }
    }
}
