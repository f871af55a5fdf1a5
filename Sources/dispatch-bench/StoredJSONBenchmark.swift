import BridgeCore
import BridgeTestSupport
import Foundation

/// `dispatch-bench --stored-json`: what the store's two hand-written writers (`RunStateJSON`,
/// `ActivitySessionJSON`, on `JSONByteBuffer`) save over `JSONEncoder` (the store's own, sorted
/// keys) on the values a group commit writes: every run state and card session of a scripted
/// six-group run, played to its middle (jobs running, the card live with acknowledged content).
/// Five timed rounds of each after a warm-up; prints the median microseconds per value of each
/// writer and their ratio. Nothing is compared with a threshold: only ratios mean anything on a
/// shared machine.
enum StoredJSONBenchmark {
    static let rounds = 5
    static let writesPerRound = 20_000

    static func run() -> Int32 {
        let (states, sessions) = values()
        guard !states.isEmpty, !sessions.isEmpty else {
            print("stored-json: the scripted run left no run state or card")
            return 1
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let stateBytes = states.map { RunStateJSON.text(of: $0)?.utf8.count ?? 0 }.reduce(0, +) / states.count
        let sessionBytes =
            sessions.map { ActivitySessionJSON.text(of: $0)?.utf8.count ?? 0 }.reduce(0, +) / sessions.count
        let runWriter = median("RunStateJSON", count: states.count) { index in
            RunStateJSON.text(of: states[index])?.utf8.count ?? 0
        }
        let runEncoder = median("RunState JSONEncoder", count: states.count) { index in
            (try? encoder.encode(states[index]).count) ?? 0
        }
        let sessionWriter = median("ActivitySessionJSON", count: sessions.count) { index in
            ActivitySessionJSON.text(of: sessions[index])?.utf8.count ?? 0
        }
        let sessionEncoder = median("ActivitySession JSONEncoder", count: sessions.count) { index in
            (try? encoder.encode(sessions[index]).count) ?? 0
        }
        print(
            String(
                format: "stored-json run state (%d bytes): writer %.2f µs, JSONEncoder %.2f µs: %.1fx", stateBytes,
                runWriter, runEncoder, runEncoder / runWriter))
        print(
            String(
                format: "stored-json card session (%d bytes): writer %.2f µs, JSONEncoder %.2f µs: %.1fx",
                sessionBytes, sessionWriter, sessionEncoder, sessionEncoder / sessionWriter))
        return 0
    }

    /// The run states and card sessions of a six-group run halfway through its deliveries.
    static func values() -> ([RunState], [ActivitySession]) {
        let waves = EconomyBenchmark.waves([
            ("lint", 1, 25), ("build", 2, 90), ("test", 3, 120), ("integration", 1, 150), ("docker", 1, 60),
            ("deploy", 1, 40),
        ])
        let events = EconomyBenchmark.script.deliveries(waves: waves)
        var harness = BridgeHarness(settings: ActivitySettings())
        harness.play(Array(events.prefix(events.count / 2)))
        return (Array(harness.engine.runs.values), Array(harness.engine.sessions.values))
    }

    /// The median over `rounds` of microseconds per call of `write` (which returns the bytes
    /// written, summed so the optimiser keeps every call).
    static func median(_ name: String, count: Int, _ write: (Int) -> Int) -> Double {
        var checksum = 0
        for index in 0..<1_000 { checksum &+= write(index % count) }
        var perWrite: [Double] = []
        for _ in 1...rounds {
            let started = ContinuousClock.now
            for index in 0..<writesPerRound { checksum &+= write(index % count) }
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            perWrite.append(seconds / Double(writesPerRound) * 1e6)
        }
        let median = perWrite.sorted()[rounds / 2]
        print(String(format: "stored-json %@: median %.2f µs per value (checksum %d)", name, median, checksum))
        return median
    }
}
