import BridgeCore
import Foundation
import WebhookServer

/// `dispatch-bench --digest [FILE]`: what the two hashings of every webhook delivery cost on one
/// recorded body (by default the 8.7 KB `workflow_job.waiting.json`): the signature check
/// (`WebhookSignature.check`, HMAC-SHA256 through libcrypto) and the body's digest
/// (`IncomingDelivery`, the core's `SHA256`), next to an HMAC built on the core's `SHA256` (what
/// the check would cost without libcrypto). Five timed rounds of each; prints the median
/// microseconds per body, and the deliveries a second one core could hash at that cost.
enum DigestBenchmark {
    static let rounds = 5
    static let hashesPerRound = 5_000
    static let secret = "0123456789abcdef0123456789abcdef"

    static func run(file: String?) -> Int32 {
        let path = file ?? DecodeBenchmark.defaultFile
        guard let body = FileManager.default.contents(atPath: path) else {
            print("digest: cannot read \(path)")
            return 1
        }
        let header = WebhookSignature.sign(body: body, secret: secret)
        let bytes = Array(body)
        guard coreHMAC(bytes) == header else {
            print("digest: the core's HMAC disagrees with libcrypto's")
            return 1
        }
        let check = median("HMAC-SHA256, libcrypto (WebhookSignature.check)") {
            WebhookSignature.check(body: body, header: header, secrets: [secret]) == .valid(secretIndex: 0) ? 1 : 0
        }
        let digest = median("SHA-256, the core's (IncomingDelivery.bodyDigest)") { Int(SHA256.digest(Array(body))[0]) }
        let core = median("HMAC-SHA256 on the core's SHA-256") { coreHMAC(bytes).utf8.count }
        print(
            String(
                format: "digest %@ (%d bytes): HMAC libcrypto %.2f µs (%.0f/s a core), core SHA-256 %.2f µs, "
                    + "HMAC on the core's SHA-256 %.2f µs (%.1fx libcrypto's)",
                URL(fileURLWithPath: path).lastPathComponent, body.count, check, 1e6 / check, digest, core,
                core / check))
        return 0
    }

    /// HMAC-SHA256 (RFC 2104) over the core's `SHA256`, as `sha256=` and lowercase hex.
    static func coreHMAC(_ body: [UInt8]) -> String {
        var key = Array(secret.utf8)
        if key.count > 64 { key = SHA256.digest(key) }
        key += [UInt8](repeating: 0, count: 64 - key.count)
        let inner = SHA256.digest(key.map { $0 ^ 0x36 } + body)
        return "sha256=" + SHA256.hex(SHA256.digest(key.map { $0 ^ 0x5c } + inner))
    }

    static func median(_ name: String, _ hash: () -> Int) -> Double {
        var checksum = 0
        for _ in 0..<500 { checksum &+= hash() }
        var perHash: [Double] = []
        for _ in 1...rounds {
            let started = ContinuousClock.now
            for _ in 0..<hashesPerRound { checksum &+= hash() }
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            perHash.append(seconds / Double(hashesPerRound) * 1e6)
        }
        let median = perHash.sorted()[rounds / 2]
        print(String(format: "digest %@: median %.2f µs per body (checksum %d)", name, median, checksum))
        return median
    }
}
