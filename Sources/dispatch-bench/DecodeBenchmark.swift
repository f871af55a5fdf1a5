import BridgeCore
import Foundation

/// `dispatch-bench --decode [FILE]`: what `WebhookDecoder.decode` costs per delivery on one
/// recorded body (by default the 8.7 KB `workflow_job.waiting.json`), so a change of decoder can be
/// weighed against the ingress path's budget. Five timed rounds of 10,000 decodes after a warm-up;
/// prints each round and the median in microseconds per decode. Nothing is compared with a
/// threshold: on a shared machine only the median and ratios between builds mean anything.
enum DecodeBenchmark {
    static let defaultFile = "Tests/BridgeCoreTests/Fixtures/workflow_job.waiting.json"
    static let rounds = 5
    static let decodesPerRound = 10_000

    static func run(file: String?) -> Int32 {
        let path = file ?? defaultFile
        guard let body = FileManager.default.contents(atPath: path) else {
            print("decode: cannot read \(path)")
            return 1
        }
        let event = String(URL(fileURLWithPath: path).lastPathComponent.prefix { $0 != "." })
        // The checksum keeps the optimiser from dropping decodes whose results are unused.
        var checksum = 0
        do {
            for _ in 0..<1_000 { checksum &+= try decodedID(event: event, body: body) }
            var perDecode: [Double] = []
            for round in 1...rounds {
                let started = ContinuousClock.now
                for _ in 0..<decodesPerRound { checksum &+= try decodedID(event: event, body: body) }
                let elapsed = ContinuousClock.now - started
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
                perDecode.append(seconds / Double(decodesPerRound) * 1e6)
                print(String(format: "decode round %d: %.2f µs per decode", round, perDecode[round - 1]))
            }
            let median = perDecode.sorted()[rounds / 2]
            print(
                String(
                    format: "decode %@ (%d bytes, %@): median %.2f µs per decode over %d rounds of %d (checksum %d)",
                    URL(fileURLWithPath: path).lastPathComponent, body.count, event, median, rounds, decodesPerRound,
                    checksum))
            return 0
        } catch {
            print("decode: \(path) does not decode as \(event): \(error)")
            return 1
        }
    }

    /// The run or job id of the decoded event, 1 for any other event.
    private static func decodedID(event: String, body: Data) throws -> Int {
        switch try WebhookDecoder.decode(event: event, body: body, contentType: "application/json") {
        case .workflowJob(let job): job.job.id
        case .workflowRun(let run): run.run.id
        default: 1
        }
    }
}
