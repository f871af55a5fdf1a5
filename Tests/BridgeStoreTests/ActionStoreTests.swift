import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Synchronization
import Testing

/// `action_tokens` and `actions`: a token is live until it is spent or expires, spending one
/// spends every copy of the same action (and the other answer of a review) and nothing else, the
/// audit keeps each press, a press cut off by a stop is never left pending, and retention keeps
/// both tables small.
@Suite("action store", .onEachEngine)
struct ActionStoreTests {
    let database: BridgeDatabase
    /// Where `database` is: a second connection (another instance's) opens the same one.
    let location: DatabaseLocation
    static let run = RunKey(repository: "acme/widgets", runID: 1, attempt: 1)

    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "action-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        location = try TestStore.location(in: directory.path)
        database = try BridgeDatabase(location: location)
    }

    static func binding(
        _ kind: ActionKind, run: RunKey = run, environment: String? = nil, at now: UnixTime = 1_000,
        ttl: UnixTime = 3_600
    ) -> ActionBinding {
        ActionBinding(
            kind: kind, run: run, environment: environment, recipient: "octocat", surface: "card gh-1",
            createdAt: now, expiresAt: now + ttl)
    }

    func mint(_ selector: String, _ binding: ActionBinding) throws {
        try database.write {
            try $0.insertActionToken(selector: selector, verifierHash: Data(selector.utf8), binding: binding)
        }
    }

    func live(_ selector: String, at now: UnixTime = 1_001) throws -> Bool {
        try database.liveActionToken(selector: selector, at: now) != nil
    }

    @Test("a token is found by its selector with its binding and hash, until it expires")
    func expiry() throws {
        let binding = Self.binding(.rerun, environment: "prod «東京»")
        try mint("selector-001", binding)
        let (found, hash) = try #require(try database.liveActionToken(selector: "selector-001", at: 1_001))
        #expect(found == binding)
        #expect(hash == Data("selector-001".utf8))
        #expect(try live("selector-001", at: 4_599.9))
        #expect(try !live("selector-001", at: 4_600), "dead at its expiry")
        #expect(try !live("selector-999"))
    }

    @Test("spending spends every copy of the action on that attempt, and a review's other answer; nothing else")
    func spending() throws {
        let other = RunKey(repository: "acme/widgets", runID: 1, attempt: 2)
        try mint("card-rerun01", Self.binding(.rerun))
        try mint("alert-rerun1", Self.binding(.rerun))
        try mint("card-cancel1", Self.binding(.cancel))
        try mint("rerun-other1", Self.binding(.rerun, run: other))
        try mint("approve-prod", Self.binding(.approve, environment: "prod"))
        try mint("reject-prod1", Self.binding(.reject, environment: "prod"))
        try mint("approve-stag", Self.binding(.approve, environment: "staging"))

        try database.write { try $0.spendActionTokens(like: Self.binding(.rerun), at: 1_001) }
        #expect(try !live("card-rerun01") && !live("alert-rerun1"))
        #expect(try live("card-cancel1"), "another action")
        #expect(try live("rerun-other1"), "another attempt")

        try database.write { try $0.spendActionTokens(like: Self.binding(.approve, environment: "prod"), at: 1_002) }
        #expect(try !live("approve-prod") && !live("reject-prod1"))
        #expect(try live("approve-stag"), "another environment's review")
    }

    /// A token minted under `selector` with a hash of its own (not derived from the selector, as
    /// `mint` does), so a test can press it with the right secret or a wrong one.
    func mintHashed(_ selector: String, _ binding: ActionBinding) throws -> Data {
        let hash = Data(SHA256.digest(Array("secret of \(selector)".utf8)))
        try database.write { try $0.insertActionToken(selector: selector, verifierHash: hash, binding: binding) }
        return hash
    }

    @Test(
        "spending is one conditional update: the first press gets the binding, a second, a forged or a late one nothing"
    )
    func conditionalSpend() throws {
        let binding = Self.binding(.approve, environment: "prod \u{202E}«東京» 👩‍🚀")
        let hash = try mintHashed("approve-0001", binding)
        var wrong = hash
        wrong[0] ^= 1
        #expect(
            try database.write { try $0.spendActionToken(selector: "approve-0001", verifierHash: wrong, at: 1_001) }
                == nil)
        #expect(try live("approve-0001"), "a wrong secret spends nothing")
        #expect(
            try database.write { try $0.spendActionToken(selector: "approve-9999", verifierHash: hash, at: 1_001) }
                == nil)
        let spent = try database.write {
            try $0.spendActionToken(selector: "approve-0001", verifierHash: hash, at: 1_002)
        }
        #expect(spent == binding, "the row comes back from the update itself")
        #expect(try !live("approve-0001"))
        #expect(
            try database.write { try $0.spendActionToken(selector: "approve-0001", verifierHash: hash, at: 1_003) }
                == nil)
        let late = try mintHashed("cancel-00001", Self.binding(.cancel, ttl: 10))
        #expect(
            try database.write { try $0.spendActionToken(selector: "cancel-00001", verifierHash: late, at: 1_010) }
                == nil)
        let used = try database.store.query(
            "SELECT selector, used_at FROM action_tokens ORDER BY selector"
        ) { "\($0.string(0) ?? "")=\($0.double(1).map { String(Int($0)) } ?? "-")" }
        #expect(
            used == ["approve-0001=1002", "cancel-00001=-"], "the first spend's time stays; the late one is unused")
    }

    @Test("two connections spending one token at the same moment, 10 rounds: exactly one gets it each round")
    func concurrentSpend() async throws {
        let other = try BridgeDatabase(location: location)
        if case .sqlite = location {
            // The second connection waits for the first's write lock, as a second process would.
            try database.setBusyTimeout(milliseconds: 5_000)
            try other.setBusyTimeout(milliseconds: 5_000)
        }
        nonisolated(unsafe) let connections = [database, other]
        for round in 0..<10 {
            let selector = "round-\(String(format: "%06d", round))"
            let hash = try mintHashed(
                selector, Self.binding(.rerun, run: RunKey(repository: "acme/widgets", runID: 100 + round, attempt: 1)))
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            let results = Mutex<[ActionBinding?]>([])
            for index in 0..<2 {
                group.enter()
                Thread.detachNewThread {
                    start.wait()
                    let spent = try? connections[index].write {
                        try $0.spendActionToken(selector: selector, verifierHash: hash, at: 1_001)
                    }
                    results.withLock { $0.append(spent ?? nil) }
                    group.leave()
                }
            }
            start.signal()
            start.signal()
            group.wait()
            let answers = results.withLock { $0 }
            #expect(answers.count == 2)
            #expect(answers.compactMap { $0 }.count == 1, "round \(round): \(answers)")
        }
    }

    @Test("at start an instance marks only its own cut-off presses interrupted, and those recorded before names")
    func interruptOwnOnly() throws {
        func press(_ instance: String?, at time: UnixTime) throws -> Int64 {
            try database.write {
                try $0.insertAction(
                    Self.binding(.cancel), person: "octocat", state: .requested, detail: nil, instance: instance,
                    at: time)
            }
        }
        let mine = try press("host-a 127.0.0.1:8080", at: 1_010)
        let theirs = try press("host-b 127.0.0.1:8080", at: 1_011)
        let unnamed = try press(nil, at: 1_012)
        let cut = try database.write {
            try $0.interruptRequestedActions(recordedBy: "host-a 127.0.0.1:8080", at: 1_100)
        }
        #expect(Set(cut.map(\.id)) == [mine, unnamed])
        #expect(try database.requestedActions().map(\.id) == [theirs], "another instance may be asking GitHub now")
        #expect(try database.requestedActions().first?.instance == "host-b 127.0.0.1:8080")
        let rest = try database.write { try $0.interruptRequestedActions(recordedBy: nil, at: 1_200) }
        #expect(rest.map(\.id) == [theirs], "a single instance (SQLite) takes every one")
    }

    @Test("the newest live token's expiry, for re-issuing a shown button past half its life")
    func newestExpiry() throws {
        #expect(try database.liveTokenExpiry(.cancel, run: Self.run, at: 1_001) == nil)
        try mint("cancel-old01", Self.binding(.cancel, at: 1_000))
        try mint("cancel-new01", Self.binding(.cancel, at: 2_000))
        #expect(try database.liveTokenExpiry(.cancel, run: Self.run, at: 2_001) == 5_600)
        try database.write { try $0.spendActionTokens(like: Self.binding(.cancel), at: 2_002) }
        #expect(try database.liveTokenExpiry(.cancel, run: Self.run, at: 2_003) == nil)
    }

    @Test("the audit keeps each press with GitHub's answer; a press cut off by a stop becomes interrupted")
    func audit() throws {
        let done = try database.write {
            try $0.insertAction(Self.binding(.rerun), person: "octocat", state: .requested, detail: nil, at: 1_010)
        }
        try database.write {
            try $0.finishAction(done, state: .refused, status: 403, detail: "Resource not accessible", at: 1_011)
        }
        let cut = try database.write {
            try $0.insertAction(Self.binding(.cancel), person: "octocat", state: .requested, detail: nil, at: 1_020)
        }
        let other = RunKey(repository: "acme/widgets", runID: 2, attempt: 1)
        _ = try database.write {
            try $0.insertAction(
                Self.binding(.cancel, run: other), person: "mallory", state: .notApplicable,
                detail: "the attempt has ended", at: 1_030)
        }
        #expect(try database.requestedActions().map(\.id) == [cut])
        let interrupted = try database.write { try $0.interruptRequestedActions(recordedBy: nil, at: 1_100) }
        #expect(interrupted.map(\.id) == [cut])
        #expect(try database.requestedActions().isEmpty)

        let rows = try database.actions(repository: "acme/widgets", runID: 1)
        #expect(rows.map(\.state) == [.refused, .interrupted])
        #expect(rows.first?.githubStatus == 403)
        #expect(rows.first?.detail == "Resource not accessible")
        #expect(rows.first?.finishedAt == 1_011)
        #expect(rows.last?.finishedAt == 1_100)
        #expect(try database.recentActions(limit: 2).map(\.person) == ["mallory", "octocat"])
    }

    @Test("retention: dead tokens go a day after expiry, live ones stay; presses go with the runs' retention")
    func retention() throws {
        try mint("expired-0001", Self.binding(.rerun, at: 0, ttl: 10))
        try mint("live-0000001", Self.binding(.cancel, at: 100_000))
        #expect(try database.write { try $0.pruneActionTokens(expiredBefore: 50_000) } == 1)
        #expect(try live("live-0000001", at: 100_001))
        _ = try database.write {
            try $0.insertAction(Self.binding(.rerun), person: "p", state: .done, detail: nil, at: 10)
        }
        _ = try database.write {
            try $0.insertAction(Self.binding(.rerun), person: "q", state: .done, detail: nil, at: 5_000)
        }
        #expect(try database.write { try $0.pruneActions(pressedBefore: 1_000) } == 1)
        #expect(try database.actions(repository: "acme/widgets", runID: 1).map(\.person) == ["q"])
    }

    @Test("a refused action's alert is stored like the others (the migration widened the reasons)")
    func actionAlerts() throws {
        var rows = EngineRows()
        rows.alerts = [
            PlannedAlert(run: Self.run, reason: .actionFailed, body: ["title": "t", "body": "b"], activitySlug: nil)
        ]
        try database.write { try $0.save(rows, at: 1_000) }
        #expect(try database.alerts(repository: "acme/widgets", runID: 1).map(\.reason) == [.actionFailed])
    }
}
