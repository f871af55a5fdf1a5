import BridgeCore
import BridgeStore
import Foundation

/// What recovery (`GitHubRecovery`) reads from and writes to the store, through the service's door
/// (`BridgeService.read`, `BridgeService.turn`). A store that cannot be read ends the sweep without
/// recording it, so the next one reads the same stretch of the log again; the failure is logged.
/// Every write is the leader's, so each is a leader's turn: a deposed leader's late record of a
/// sweep, a request or a give-up changes nothing, and it steps down.
struct RecoveryLedger: Sendable {
    let service: BridgeService
    let log: Logger

    /// Of `guids`, those stored; and what was asked of each before. Nil when the store failed.
    func state(guids: Set<String>) async -> (stored: Set<String>, requested: [String: RedeliveryPlan.Requested])? {
        do {
            return try await service.read { database, _ in
                let stored = try database.storedDeliveries(guids)
                let requested = try database.recoveryRequests(guids.subtracting(stored)).mapValues {
                    RedeliveryPlan.Requested(
                        requests: $0.requests, lastAt: $0.lastRequestedAt, givenUp: $0.givenUpAt != nil)
                }
                return (stored, requested)
            }
        } catch {
            log.error("recovery could not read the store; the sweep runs again later", ["error": .string("\(error)")])
            return nil
        }
    }

    /// The repositories of the last `runs` runs, the most recent first (none when the store
    /// cannot be read: recovery looks again at its next sweep).
    func recentRepositories(runs: Int) async -> [String] {
        let listings = (try? await service.read { database, _ in try database.listRuns(limit: runs) }) ?? []
        var seen: [String] = []
        for listing in listings where !seen.contains(listing.key.repository) {
            seen.append(listing.key.repository)
        }
        return seen
    }

    func examinedThrough(hook: String) async -> UnixTime? {
        (try? await service.read { database, _ in try database.examinedThrough(hook: hook) }) ?? nil
    }

    func recordSweep(hook: String, examinedThrough: UnixTime, at now: UnixTime) async {
        do {
            try await service.turn("recording a sweep", at: now) { turn in
                try turn.database.recordSweep(hook: hook, examinedThrough: examinedThrough, at: now)
            }
        } catch is LeadLost {
            // Deposed: the next leader's sweep reads this stretch of the log again.
        } catch {
            log.warning("could not record a sweep; the next one reads further back", ["error": .string("\(error)")])
        }
    }

    /// Records the GUIDs a sweep gave up on, so none is said again.
    func recordGivenUp(_ deliveries: [HookDelivery], at now: UnixTime) async {
        do {
            try await service.turn("recording a delivery given up on", at: now) { turn in
                for delivery in deliveries { try turn.database.recordGivenUp(delivery.guid, at: now) }
            }
        } catch is LeadLost {
            // Deposed: the next leader gives it up in its own sweep.
        } catch {
            log.warning("could not record a delivery given up on; it is said again", ["error": .string("\(error)")])
        }
    }

    /// Counts a redelivery request before it is sent; false when it could not be recorded (it
    /// is then not sent: an unrecorded request would not count towards giving up).
    func recordRecoveryRequest(_ delivery: HookDelivery, hook: String, at now: UnixTime) async -> Bool {
        do {
            try await service.turn("counting a redelivery request", at: now) { turn in
                try turn.database.recordRecoveryRequest(delivery, hook: hook, at: now)
            }
            return true
        } catch is LeadLost {
            return false
        } catch {
            log.warning(
                "could not record a redelivery request; it is asked for at the next sweep",
                ["error": .string("\(error)")])
            return false
        }
    }

    /// Runs not finished that heard nothing for `quietFor` seconds, quietest first.
    func quietRuns(quietFor: Double, at now: UnixTime, limit: Int) async -> [RunKey] {
        await service.read { _, engine in engine.quietRuns(since: now - quietFor, limit: limit) }
    }

    /// The API said `key` goes on: its quiet period starts again (written with the run).
    func heardFromAPI(_ key: RunKey, at now: UnixTime) async {
        do {
            try await service.turn("recording a run lookup", at: now) { turn in turn.engine.heardFromAPI(key, at: now) }
        } catch is LeadLost {
            // Deposed: the next leader reads the run as the store has it.
        } catch {
            log.warning(
                "could not record a run lookup; it is written with the next change", ["error": .string("\(error)")])
        }
    }
}
