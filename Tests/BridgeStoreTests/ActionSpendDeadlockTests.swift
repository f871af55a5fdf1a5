import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Synchronization
import Testing

/// Two copies of one action (a card's token and a notification's) pressed at once on two
/// instances sharing PostgreSQL: each press spends its own token, then its copies, so each waits
/// for the row the other spent. PostgreSQL ends one transaction (40P01), which the press tries
/// again (`ActionPresses.press`): this is the premise of that retry, made to happen on purpose.
@Suite("a press's spend on PostgreSQL", .timeLimit(.minutes(1)))
struct ActionSpendDeadlockTests {
    @Test("two copies spent crosswise: one transaction commits, the other is a deadlock and finds nothing again")
    func crosswiseCopies() throws {
        let uri = try PostgresServer.shared().makeDatabase()
        nonisolated(unsafe) let connections = [
            try BridgeDatabase(location: .postgresql(uri: uri)), try BridgeDatabase(location: .postgresql(uri: uri)),
        ]
        let binding = ActionBinding(
            kind: .rerun, run: RunKey(repository: "acme/widgets", runID: 1, attempt: 1), environment: nil,
            recipient: nil, surface: "card gh-1", createdAt: 1_000, expiresAt: 4_600)
        let hashes = [Data(repeating: 1, count: 32), Data(repeating: 2, count: 32)]
        let selectors = ["card-copy-01", "alert-copy-1"]
        try connections[0].write { database in
            for index in 0..<2 {
                try database.insertActionToken(
                    selector: selectors[index], verifierHash: hashes[index], binding: binding)
            }
        }
        // Each spends its own copy, waits until the other spent its own, then spends the copies.
        let spent = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        let outcomes = Mutex<[Int: String]>([:])
        let group = DispatchGroup()
        for index in 0..<2 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do {
                    try connections[index].write { database in
                        _ = try database.spendActionToken(
                            selector: selectors[index], verifierHash: hashes[index], at: 1_001)
                        spent[index].signal()
                        spent[1 - index].wait()
                        try database.spendActionTokens(like: binding, at: 1_001)
                    }
                    outcomes.withLock { $0[index] = "committed" }
                } catch let error as PostgresError where error.isDeadlock {
                    outcomes.withLock { $0[index] = "deadlock" }
                } catch {
                    outcomes.withLock { $0[index] = "\(error)" }
                }
            }
        }
        group.wait()
        let result = outcomes.withLock { $0 }
        #expect(result.values.sorted() == ["committed", "deadlock"], "\(result)")
        // The press that lost tries again: its own copy is now spent by the other's.
        let loser = try #require(result.first { $0.value == "deadlock" }?.key)
        let again = try connections[loser].write {
            try $0.spendActionToken(selector: selectors[loser], verifierHash: hashes[loser], at: 1_002)
        }
        #expect(again == nil)
    }
}
