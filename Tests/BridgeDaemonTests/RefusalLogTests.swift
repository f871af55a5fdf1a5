import BridgeCore
import BridgeDaemon
import BridgeTestSupport
import Foundation
import Testing

/// The rate limit on refusal lines, on a clock the test moves: one line a second per kind, the
/// folded count said on the next line and kept in `/metrics`.
@Suite("refusal log")
struct RefusalLogTests {
    @Test("one line a second of each kind; the next says how many it stands for; all folded lines are counted")
    func foldsPerKind() throws {
        let lines = LineLog()
        let metrics = Metrics()
        let log = RefusalLog(
            logger: Logger(label: "test", sink: { lines.append($0) }), counters: metrics, kinds: ["a", "b"])
        for step in 0..<10 {
            log.say("a", .warning, "refused a", ["n": .number(Double(step))], at: 100 + Double(step) / 100)
        }
        log.say("b", .warning, "refused b", [:], at: 100.05)
        #expect(lines.all.count == 2, "one line of a, and b's first is not hidden by a's flood")
        #expect(metrics.value("log_lines_suppressed_total") == 9)
        log.say("a", .warning, "refused a", [:], at: 101.5)
        let last = try #require(lines.all.last.map { try JSONValue(parsing: Data($0.utf8)) })
        #expect(last["msg"] == "refused a")
        #expect(last["log.dropped"] == .number(9))
        // A kind not declared is never folded: no line is lost to a forgotten name.
        for _ in 0..<3 { log.say("c", .notice, "other", [:], at: 102) }
        #expect(lines.all.count == 6)
        #expect(metrics.prometheusText(gauges: []).contains("log_lines_suppressed_total{line=\"a\"} 9"))
    }
}
