import COpenSSL
import Foundation

/// GitHub's `X-Hub-Signature-256` check: `sha256=` followed by the hex HMAC-SHA256 of the raw
/// request body, keyed with the webhook secret.
///
/// Several secrets may be configured at once so a secret can be rotated without dropping
/// deliveries: set the new one next to the old one, change it on GitHub, then remove the old one.
/// Every configured secret is always tried and every full digest compared with `CRYPTO_memcmp`,
/// so the time taken says nothing about how much of a guess was right or which secret matched.
///
/// Hex case: GitHub sends lowercase, and `sign` produces lowercase. Uppercase (or mixed) hex is
/// accepted too: the comparison is on the decoded bytes, so the case carries no information, and
/// refusing it would only reject correctly signed deliveries from re-signing tools and proxies.
/// The `sha256=` prefix itself must be lowercase, exactly as GitHub sends it.
///
/// The HMAC is libcrypto's, not one built on the core's `SHA256` (the bridge's one SHA-256 digest,
/// whose comment says why it is the core's): this check runs on every delivery before anything
/// else, and libcrypto's took a sixth of the time on an 8.7 KB body (`dispatch-bench --digest`:
/// 9.0 µs against 53 µs on the quietest of three runs, 5.9 to 6.4 times over all three).
public enum WebhookSignature {
    public enum Check: Sendable, Equatable {
        /// The signature is the HMAC of the body under `secrets[secretIndex]` (the first one, if
        /// the same secret is listed twice).
        case valid(secretIndex: Int)
        /// No `X-Hub-Signature-256` header.
        case missing
        /// The header is not `sha256=` followed by 64 hex digits (the legacy `sha1=` included).
        case malformed
        /// Well-formed, but no configured secret produces it — also the answer when no secret is
        /// configured at all.
        case mismatch
    }

    /// The header prefix; `sha1=` (GitHub's legacy `X-Hub-Signature`) is never trusted.
    static let prefix = "sha256="
    static let digestLength = Int(PWB_SHA256_DIGEST_LENGTH)

    /// Checks `header` (the value of `X-Hub-Signature-256`, nil when absent) against `body` under
    /// each of `secrets`.
    public static func check(body: Data, header: String?, secrets: [String]) -> Check {
        guard let header else { return .missing }
        guard let expected = decode(header) else { return .malformed }
        var matched: Int?
        for (index, secret) in secrets.enumerated() {
            let equal: Bool
            if let digest = hmac(body: body, secret: secret) {
                equal = expected.withUnsafeBytes { left in
                    digest.withUnsafeBytes { right in
                        pwb_constant_time_equal(left.baseAddress, right.baseAddress, digestLength) == 1
                    }
                }
            } else {
                equal = false
            }
            // No early exit: the remaining secrets are hashed and compared all the same.
            if equal && matched == nil { matched = index }
        }
        return matched.map { .valid(secretIndex: $0) } ?? .mismatch
    }

    /// A verified `header`'s digest as `hmac-sha256:` and lowercase hex, whatever case the sender
    /// wrote: the body's fingerprint under the hook's secret, which the check computed already, so a
    /// replayed body (the same header under a new delivery id) is recognised at no cost of its own.
    /// Nil for a header `check` would call malformed.
    public static func fingerprint(of header: String?) -> String? {
        guard let header, let bytes = decode(header) else { return nil }
        let hexDigits = Array("0123456789abcdef".utf8)
        var text = Array("hmac-sha256:".utf8)
        for byte in bytes {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `sha256=` and the lowercase hex HMAC-SHA256 of `body` under `secret`: what GitHub sends,
    /// and what `replay` and tests sign with.
    public static func sign(body: Data, secret: String) -> String {
        // HMAC-SHA256 over in-memory buffers cannot fail in libcrypto short of memory exhaustion;
        // an all-zero digest would then simply never verify.
        let digest = hmac(body: body, secret: secret) ?? [UInt8](repeating: 0, count: digestLength)
        let hexDigits = Array("0123456789abcdef".utf8)
        var text = Array(prefix.utf8)
        for byte in digest {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The 32 digest bytes of a well-formed header, or nil.
    private static func decode(_ header: String) -> [UInt8]? {
        let utf8 = Array(header.utf8)
        let prefixBytes = Array(prefix.utf8)
        guard utf8.count == prefixBytes.count + digestLength * 2, utf8.starts(with: prefixBytes) else { return nil }
        var digest: [UInt8] = []
        digest.reserveCapacity(digestLength)
        var index = prefixBytes.count
        while index < utf8.count {
            guard let high = hexValue(utf8[index]), let low = hexValue(utf8[index + 1]) else { return nil }
            digest.append(high << 4 | low)
            index += 2
        }
        return digest
    }

    private static func hexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return character - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// HMAC-SHA256 through libcrypto, or nil if libcrypto reports a failure.
    private static func hmac(body: Data, secret: String) -> [UInt8]? {
        let key = Array(secret.utf8)
        var digest = [UInt8](repeating: 0, count: digestLength)
        let succeeded = key.withUnsafeBytes { keyBytes in
            body.withUnsafeBytes { bodyBytes in
                digest.withUnsafeMutableBufferPointer { output in
                    pwb_hmac_sha256(
                        keyBytes.baseAddress, keyBytes.count,
                        bodyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bodyBytes.count,
                        output.baseAddress)
                }
            }
        }
        return succeeded == 1 ? digest : nil
    }
}
