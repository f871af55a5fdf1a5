import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// The monthly budget end to end: the daemon reads `GET /auth/me` from the fake PushWard, which
/// counts what it accepts, and with the month nearly spent a new run gets no card while the run
/// already on one still ends, within the limit.
@Suite("Push budget end to end", .serialized, .timeLimit(.minutes(2)))
struct PushBudgetEndToEndTests {
    typealias EndToEnd = DispatchEndToEndTests

    @Test("nearly spent: the run on a card ends within the limit, a new run is skipped with its reason recorded")
    func nearlySpentBudget() async throws {
        let fake = try FakePushWardServer()
        // 8 of 30 left, resetting within the hour: the forecast is about one run.
        let now = Date().timeIntervalSince1970
        fake.setQuota(limit: 30, used: 22, resetsAt: (now + 3_600).rounded())
        let bridge = try EndToEnd.Bridge(
            fake: fake, economy: #""fidelity": "auto", "coalesce": "0s""#,
            topLevel: #""activity": {"scope": "workflow"},"#)
        // The budget is read at start, before any run is decided.
        #expect(
            await EndToEnd.eventually {
                bridge.logs.all.contains { $0.contains("PushWard budget read") }
            })

        let first = RunScript(runID: 501, workflow: "CI", start: now - 300, firstJobID: 70_000)
        let second = RunScript(runID: 502, workflow: "Nightly", start: now - 200, firstJobID: 80_000)
        let firstSlug = ActivityIdentity.forRun(repository: first.repository, workflow: "CI", scope: .workflow).slug
        let secondSlug = ActivityIdentity.forRun(
            repository: second.repository, workflow: "Nightly", scope: .workflow
        ).slug
        let waves = [[RunScript.Job("build", duration: 30)], [RunScript.Job("test", duration: 30)]]
        let firstEvents = first.deliveries(waves: waves)
        // The first run starts and takes its card.
        for event in firstEvents.prefix(4) { try await bridge.deliver(event) }
        // Live in the bridge's own records too: its answers counted against the budget.
        #expect(await EndToEnd.eventually { (try? bridge.card(firstSlug)?.phase) == .live })
        // The second arrives while the first is on its card: what is left is the first's end.
        for event in second.deliveries(waves: waves) { try await bridge.deliver(event) }
        // The first finishes and ends.
        for event in firstEvents.dropFirst(4) { try await bridge.deliver(event) }
        #expect(await EndToEnd.eventually { fake.activities[firstSlug]?.state == "ended" })
        await bridge.daemon.shutdown()
        // The budget reader, asleep between two reads of /auth/me, does not hold the stop up.
        #expect(!bridge.logs.all.contains { $0.contains("did not finish before the shutdown deadline") })

        let requests = fake.requests
        #expect(!requests.contains { $0.path.hasSuffix(secondSlug) || $0.body?["slug"] == .string(secondSlug) })
        #expect(!requests.contains { $0.status == 429 }, "the limit was reached")
        #expect(fake.quota.used <= 30)
        let database = try BridgeDatabase(path: bridge.databasePath, readOnly: true)
        let firstRun = try #require(try database.runAttempts(runID: 501).first)
        let secondRun = try #require(try database.runAttempts(runID: 502).first)
        let firstDecision = try #require(firstRun.state.cardDecision)
        #expect(firstDecision.level == .milestones, "\(firstDecision.reason)")
        #expect((firstRun.state.updatesSpent ?? 0) >= 4)
        let skipped = try #require(secondRun.state.cardDecision)
        #expect(skipped.level == nil)
        #expect(skipped.reason.hasPrefix("no card"))
        #expect(secondRun.state.updatesSpent == nil)
    }

    @Test("after PushWard says the quota is spent, the budget is read again at once, not 15 minutes later")
    func quotaExceededRereadsTheBudget() async throws {
        let fake = try FakePushWardServer()
        let now = Date().timeIntervalSince1970
        // Plenty left by the planner's reckoning, but PushWard refuses the third update (the
        // account was spent elsewhere meanwhile).
        fake.setQuota(limit: 100_000, used: 0, resetsAt: (now + 86_400).rounded())
        fake.setFault { method, path, _ in
            method == "PATCH" && fake.requests.filter({ $0.path.hasPrefix("/activities") }).count >= 2
                ? .status(429, code: "quota.exceeded", detail: "spent elsewhere", resetAt: now + 86_400) : nil
        }
        let bridge = try EndToEnd.Bridge(fake: fake, economy: #""fidelity": "auto""#)
        func usageReads() -> Int { fake.requests.filter { $0.method == "GET" && $0.path == "/auth/me" }.count }
        #expect(await EndToEnd.eventually { usageReads() == 1 })
        let run = RunScript(runID: 601, workflow: "CI", start: now - 300, firstJobID: 90_000)
        for event in run.deliveries(waves: [[RunScript.Job("build", duration: 30)]]) { try await bridge.deliver(event) }
        #expect(await EndToEnd.eventually { fake.requests.contains { $0.status == 429 } })
        #expect(await EndToEnd.eventually { usageReads() == 2 }, "\(usageReads()) reads of /auth/me")
        await bridge.daemon.shutdown()
    }
}
