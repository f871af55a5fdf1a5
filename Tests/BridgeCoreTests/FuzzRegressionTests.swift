import BridgeTestSupport
import Dispatch
import Foundation
import Testing

/// Every input the fuzz targets (`make fuzz`, `Fuzz/`) ever found, replayed through the same check
/// the target runs (`FuzzCheck`), so a fixed finding stays fixed. The inputs live in
/// `Fixtures/fuzz/<target>/`, one file each, named after what they broke; `make fuzz` also seeds
/// its corpus from them. Deliberately nasty inputs written by hand sit beside the found ones.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    /// How long one input may take. A finding can be a hang (libFuzzer's `timeout-*`), and a
    /// regression of one must fail rather than stall the suite: Swift Testing's time limit cannot
    /// stop a loop that never yields, so each check runs on its own thread and is abandoned here.
    static let deadline: DispatchTimeInterval = .seconds(60)

    /// The inputs kept for one target, by file name, sorted.
    static func inputs(_ target: String) -> [String] {
        let directory = Fixtures.directory.appendingPathComponent("fuzz/" + target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted()
    }

    /// Runs `check` on the input `target/name`, failing the test with its finding, or when it does
    /// not return within `deadline`.
    static func replay(
        _ target: String, _ name: String, through check: @escaping @Sendable ([UInt8]) throws(FuzzFinding) -> Void
    ) throws {
        let input = Array(try Fixtures.data("fuzz/\(target)/\(name)"))
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do throws(FuzzFinding) {
                try check(input)
            } catch {
                outcome.finding = error
            }
            done.signal()
        }
        guard done.wait(timeout: .now() + deadline) == .success else {
            Issue.record("\(target)/\(name): no answer within \(deadline) (a hang)")
            return
        }
        if let finding = outcome.finding {
            Issue.record("\(target)/\(name): \(finding)")
        }
    }

    /// What the checking thread found; written before the semaphore is signalled, read after.
    private final class Outcome: @unchecked Sendable {
        var finding: FuzzFinding?
    }

    @Test("each target keeps its inputs", arguments: ["webhook-decoder", "ingest", "merge-patch", "listener-routes"])
    func everyTargetHasInputs(target: String) {
        #expect(!Self.inputs(target).isEmpty, "no inputs in Fixtures/fuzz/\(target)")
    }

    @Test("webhook decoder", arguments: inputs("webhook-decoder"))
    func webhookDecoder(name: String) throws {
        try Self.replay("webhook-decoder", name, through: FuzzCheck.webhookDecoder)
    }

    @Test("ingest: decode, engine, reconciler, contract", arguments: inputs("ingest"))
    func ingest(name: String) throws {
        try Self.replay("ingest", name, through: FuzzCheck.ingest)
    }

    @Test("merge patch", arguments: inputs("merge-patch"))
    func mergePatch(name: String) throws {
        try Self.replay("merge-patch", name, through: FuzzCheck.mergePatch)
    }

    @Test("listener routes: admin route, query, Host, action token path", arguments: inputs("listener-routes"))
    func listenerRoutes(name: String) throws {
        try Self.replay("listener-routes", name, through: FuzzCheck.listenerRoutes)
    }
}
