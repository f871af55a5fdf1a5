import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// `recovery_hooks` and `recovery_requests` on a real file: a request counted each time it is
/// made, a give-up recorded once, the sweep's mark kept per hook, old requests pruned.
@Suite("recovery store", .onEachEngine)
struct RecoveryStoreTests {
    let directory: URL
    let database: BridgeDatabase

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("recovery-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        database = try TestStore.open(in: directory.path)
    }

    static func attempt(_ id: Int, _ guid: String) -> HookDelivery {
        HookDelivery(
            id: id, guid: guid, deliveredAt: 1_000, redelivery: false, statusCode: 0, event: "workflow_job",
            action: "completed")
    }

    @Test("each request counts, the newest attempt is kept, and a give-up is recorded once, at its first time")
    func requestsAndGivingUp() throws {
        let hook = "repos/acme/widgets/hooks/1"
        try database.recordRecoveryRequest(Self.attempt(10, "guid-1"), hook: hook, at: 2_000)
        try database.recordRecoveryRequest(Self.attempt(11, "guid-1"), hook: hook, at: 2_700)
        let first = try #require(try database.recoveryRequests(["guid-1", "guid-2"])["guid-1"])
        #expect(first.requests == 2 && first.attemptID == 11)
        #expect(first.firstRequestedAt == 2_000 && first.lastRequestedAt == 2_700 && first.givenUpAt == nil)
        try database.recordGivenUp("guid-1", at: 3_400)
        try database.recordGivenUp("guid-1", at: 9_000)
        #expect(try database.recoveryRequests(["guid-1"])["guid-1"]?.givenUpAt == 3_400)
        #expect(try database.recoveryRequests(["guid-2"]).isEmpty)

        #expect(try database.examinedThrough(hook: hook) == nil)
        try database.recordSweep(hook: hook, examinedThrough: 1_500, at: 2_000)
        try database.recordSweep(hook: hook, examinedThrough: 1_800, at: 2_600)
        #expect(try database.examinedThrough(hook: hook) == 1_800)

        #expect(try database.pruneRecoveryRequests(before: 2_700) == 0)
        #expect(try database.pruneRecoveryRequests(before: 2_701) == 1)
        #expect(try database.recentRecoveryRequests().isEmpty)
    }
}
