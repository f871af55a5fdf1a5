import BridgeCore
import BridgeDaemon
import BridgeTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The bridge against a fake PushWard that enforces the documented limits: 200 requests a minute
/// per address (in a time-compressed minute, the bridge's pacer scaled the same way through
/// `pushward.rate_window`) and 50 activities an account, ended ones included until deleted.
@Suite("PushWard's limits end to end", .serialized, .timeLimit(.minutes(3)))
struct PushWardLimitsEndToEndTests {
    typealias Bridge = DispatchEndToEndTests.Bridge

    /// PushWard's minute, compressed tenfold: 200 requests in 6 s (the seventy repositories).
    static let window = 6.0

    /// A run of repository `index` (its own card), scripted a little in the past.
    static func script(_ index: Int, runID: Int? = nil) -> RunScript {
        var script = RunScript(
            runID: runID ?? 50_000 + index, runNumber: index, start: Date().timeIntervalSince1970 - 60,
            firstJobID: 1_000_000 + 100 * index)
        script.repository = Repository(
            fullName: "acme/service-\(index)", htmlURL: "https://github.com/acme/service-\(index)",
            defaultBranch: "main")
        return script
    }

    static func slug(_ script: RunScript) -> String {
        ActivityIdentity.forRun(repository: script.repository, workflow: "CI", scope: .repository).slug
    }

    /// Eight people's logins routed to their PushWard members.
    static let eightPeople =
        #""routing": {"members": {"#
        + (0..<8).map { #""dev\#($0)": "usr_\#($0)""# }.joined(separator: ", ") + "}},"

    /// The card of `script`'s run when routing gives each person their own.
    static func routedSlug(_ script: RunScript) -> String {
        ActivityIdentity.forRun(
            repository: script.repository, workflow: "CI", scope: .repository, person: script.actor.lowercased()
        ).slug
    }

    /// Delivers each run's `events`, in order within a run, the runs side by side.
    static func deliver(
        _ runs: [RunScript], through bridge: Bridge, _ events: @escaping @Sendable (RunScript) -> [WebhookEvent]
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for script in runs {
                group.addTask {
                    for event in events(script) {
                        let status = try await bridge.deliver(event)
                        #expect(status == 202)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    static func isEnd(_ request: FakePushWardServer.Received, _ slug: String) -> Bool {
        request.method == "PATCH" && request.path == "/activities/\(slug)" && request.body?["state"] == "ended"
            && (200..<300).contains(request.status)
    }

    @Test("forty runs starting within ten seconds draw no 429, and the end frames overtake the starts waiting")
    func fortyRunsAtOnce() async throws {
        let fake = try FakePushWardServer()
        // An organisation's hook: forty runs of eight people, each person's five on their own
        // phones (routing by member), so every card may be ongoing within PushWard's five per
        // person and only the rate limit is met. PushWard's 200 in a window of 15 s, the pacer at
        // 60 in it, of which starts may fill 54 and only end frames and ends the last 6.
        fake.setKeyKind(.organisation)
        fake.setLimits(FakeLimits(requestsPerWindow: 200, rateWindow: 15))
        // The daemon's clock is held while the thirty start and the ten finish: the pacer's window
        // then keeps what it admitted for as long as sending those deliveries takes, which under
        // ThreadSanitizer was longer than the window.
        let clock = HoldableClock()
        let bridge = try Bridge(
            fake: fake,
            economy: Bridge.everyChange + #", "requests_per_minute": 60, "rate_window": "15s", "ended_ttl": "1h""#,
            topLevel: Self.eightPeople, clock: { clock.now() })
        let runs = (1...40).map { index in
            var script = Self.script(index)
            script.actor = "dev\(index % 8)"
            return script
        }
        let waves = [
            [RunScript.Job("build", duration: 20)], [RunScript.Job("test", duration: 20)],
            [RunScript.Job("deploy", duration: 10)],
        ]
        // Ten runs start and get their cards; then thirty more start at once (each run's
        // deliveries in order, the runs side by side), and the ten finish while those starts wait.
        let finishing = Array(runs.prefix(10))
        let waiting = Array(runs.dropFirst(10))
        try await Self.deliver(finishing, through: bridge) { Array($0.deliveries(waves: waves).prefix(4)) }
        #expect(await fake.until { finishing.allSatisfy { Self.hasCard($0, fake.requests) } })
        clock.hold()
        try await Self.deliver(waiting, through: bridge) { Array($0.deliveries(waves: waves).prefix(4)) }
        // Sixty starts are more than the 54 the pacer lets starts fill: it refuses some, and the
        // window, held, stays full of starts.
        #expect(await Self.paced("starting", bridge) > 0)
        try await Self.deliver(finishing, through: bridge) { Array($0.deliveries(waves: waves).dropFirst(4)) }
        // The ten's end frames and ends take the six places left, ahead of the starts refused.
        #expect(await fake.until { Self.endingRequests(of: finishing, fake.requests).count >= 6 })
        let releasedAt = Date().timeIntervalSince1970
        clock.release()
        bridge.daemon.service.wakeups.signal()
        #expect(
            await fake.until {
                let requests = fake.requests
                return finishing.allSatisfy { script in requests.contains { Self.isEnd($0, Self.routedSlug(script)) } }
            })
        try await Self.deliver(waiting, through: bridge) { Array($0.deliveries(waves: waves).dropFirst(4)) }
        #expect(await fake.until { runs.allSatisfy { fake.activities[Self.routedSlug($0)]?.state == "ended" } })
        // What the pacer held is counted, and its limit shown, in /metrics.
        let scrape = URLRequest(url: URL(string: "http://127.0.0.1:\(bridge.daemon.adminPort)/metrics")!)
        let (_, metrics) = try await MetricsTests.send(scrape)
        #expect(MetricsTests.sample(metrics, "pushward_bridge_pushward_pacer_limit") == 60)
        await bridge.daemon.shutdown()

        let requests = fake.requests
        #expect(!requests.contains { $0.status == 429 }, "PushWard's rate limit was met")
        #expect(fake.rateLimitCounts.refused == 0)
        #expect(fake.violations.isEmpty, "\(fake.violations)")
        // The fake counts a request when it arrives, the pacer when it admits it: requests queued
        // on the connections arrive bunched, so the fake's count may pass 60 a little, never near 200.
        #expect(fake.rateLimitCounts.peak < 100, "peak \(fake.rateLimitCounts.peak) in a window")
        // While the clock was held: exactly the six places starts may not take went to the ten's
        // end frames and ends, and the thirty's starts still waited (54 places hold 27 starts).
        let held = requests.filter { $0.at < releasedAt }
        #expect(Self.endingRequests(of: finishing, held).count == 6)
        #expect(waiting.filter { Self.hasCard($0, held) }.count < waiting.count)
    }

    /// Whether `requests` hold a card's first frame for `script`'s run (a PATCH PushWard took).
    static func hasCard(_ script: RunScript, _ requests: [FakePushWardServer.Received]) -> Bool {
        requests.contains {
            $0.method == "PATCH" && $0.path == "/activities/\(routedSlug(script))" && $0.status == 200
        }
    }

    /// The end frames (progress 1) and ends (`state: ended`) among `requests` for `runs`' cards:
    /// the pacer's `ending` tier.
    static func endingRequests(
        of runs: [RunScript], _ requests: [FakePushWardServer.Received]
    ) -> [FakePushWardServer.Received] {
        let paths = Set(runs.map { "/activities/\(routedSlug($0))" })
        return requests.filter {
            $0.method == "PATCH" && paths.contains($0.path)
                && ($0.body?["state"] == "ended" || $0.body?["content"]?["progress"] == 1)
        }
    }

    /// The pacer's count of requests held back in `tier`, once it is above zero: read from
    /// `/metrics` until then (the test's time limit bounds the wait; no window is guessed).
    static func paced(_ tier: String, _ bridge: Bridge) async -> Double {
        let scrape = URLRequest(url: URL(string: "http://127.0.0.1:\(bridge.daemon.adminPort)/metrics")!)
        while !Task.isCancelled {
            if let (_, metrics) = try? await MetricsTests.send(scrape),
                let held = MetricsTests.sample(
                    metrics, #"pushward_bridge_pushward_requests_paced_total{tier="\#(tier)"}"#),
                held > 0
            {
                return held
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return 0
    }

    @Test("seventy repositories one after another: under 50 activities, each run its card, foreign ones untouched")
    func seventyRepositories() async throws {
        let fake = try FakePushWardServer()
        // Auto-deletion too slow to help, and the bridge's own lingering (ended_ttl 1h) too:
        // room is made on 409 alone.
        fake.setLimits(FakeLimits(requestsPerWindow: 200, rateWindow: Self.window, autoDeletion: .off))
        let foreign = ["someone-elses-deploy", "nightly-backup", "on-call"]
        for slug in foreign { fake.insertForeignActivity(slug, name: "Not the bridge's") }
        let bridge = try Bridge(
            fake: fake,
            economy: Bridge.everyChange + #", "requests_per_minute": 120, "rate_window": "6s", "ended_ttl": "1h""#)
        let waves = [[RunScript.Job("build", duration: 5)]]
        var slugs: [String] = []
        for index in 1...70 {
            let script = Self.script(index)
            let slug = Self.slug(script)
            slugs.append(slug)
            for event in script.deliveries(waves: waves) { #expect(try await bridge.deliver(event) == 202) }
            let ended = await DispatchEndToEndTests.eventually(timeout: 30) {
                fake.requests.contains { Self.isEnd($0, slug) }
            }
            #expect(ended, "run \(index) got no card to its end")
            guard ended else { break }
        }
        await bridge.daemon.shutdown()

        let requests = fake.requests
        #expect(fake.peakActivities <= 50, "the fake held \(fake.peakActivities)")
        for slug in foreign { #expect(fake.activities[slug] != nil, "\(slug) was deleted") }
        #expect(!fake.deletions.contains { foreign.contains($0.slug) })
        // The account filled: creates met the cap, and each such create went again and was taken.
        let refused = requests.filter { $0.method == "POST" && $0.status == 409 }
        #expect(!refused.isEmpty, "the cap was never met: the test proves nothing")
        for refusal in refused {
            let slug = refusal.body?["slug"]?.stringValue ?? ""
            #expect(
                requests.contains { $0.method == "POST" && $0.body?["slug"]?.stringValue == slug && $0.status == 201 },
                "\(slug) was never created after its 409")
        }
        let deleted = requests.filter { $0.method == "DELETE" }
        #expect(deleted.allSatisfy { $0.status == 204 })
        #expect(Set(deleted.map(\.path)).isSubset(of: Set(slugs.map { "/activities/\($0)" })))
        #expect(!requests.contains { $0.status == 429 })
        #expect(fake.violations.isEmpty, "\(fake.violations)")
    }
}
