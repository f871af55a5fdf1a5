import COpenSSL
import Foundation

/// A GitHub App's private key, and the JWTs it signs: RS256 (RSASSA-PKCS1-v1_5, SHA-256) through
/// libcrypto, the only algorithm GitHub accepts for Apps.
///
/// A JWT is good for the App's own endpoints (`/app/hook/deliveries`, finding an installation,
/// minting installation tokens). GitHub rejects one whose `exp` is more than 10 minutes ahead or
/// whose `iat` is in the future by its clock, so `iat` is set 60 s in the past (GitHub's advice
/// for clock drift) and `exp` 9 minutes ahead.
public final class GitHubAppKey: @unchecked Sendable {
    /// Why a key file cannot sign: said at start, naming the file, never its contents.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    // Immutable after init; libcrypto signs with a key from several threads safely.
    private let key: OpaquePointer

    /// Reads a PEM private key (PKCS#1 `RSA PRIVATE KEY`, as GitHub hands them out, or PKCS#8).
    public init(pem: Data) throws(Problem) {
        // Refused before libcrypto sees it: an encrypted key would need a passphrase the daemon
        // cannot be given under systemd (and libcrypto must never ask for one on a terminal).
        let text = String(decoding: pem.prefix(4_096), as: UTF8.self)
        if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || text.contains("Proc-Type: 4,ENCRYPTED") {
            throw Problem(
                description: "is encrypted with a passphrase, which the daemon cannot be given: decrypt it "
                    + "(openssl pkey -in KEY -out KEY.plain, then keep the plain file 0600 or in a systemd credential)")
        }
        let loaded = pem.withUnsafeBytes { pwb_private_key_load($0.baseAddress, $0.count) }
        guard let loaded else {
            throw Problem(
                description: "is not a PEM RSA private key (GitHub's App settings, \"Generate a private key\", "
                    + "give one: -----BEGIN RSA PRIVATE KEY-----)")
        }
        key = loaded
    }

    deinit {
        pwb_private_key_free(key)
    }

    /// A JWT for App `appID`, issued at `now` (seconds since 1970).
    public func jwt(appID: Int, at now: Double) -> String? {
        let issued = Int(now.rounded(.down)) - 60
        let header = Self.base64URL(Data(#"{"alg":"RS256","typ":"JWT"}"#.utf8))
        let claims = Self.base64URL(Data(#"{"iat":\#(issued),"exp":\#(issued + 60 + 540),"iss":"\#(appID)"}"#.utf8))
        let input = Data((header + "." + claims).utf8)
        var signature = [UInt8](repeating: 0, count: pwb_signature_size(key))
        var length = signature.count
        let signed = input.withUnsafeBytes { bytes in
            pwb_rs256_sign(key, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, &signature, &length)
        }
        guard signed == 1 else { return nil }
        return header + "." + claims + "." + Self.base64URL(Data(signature.prefix(length)))
    }

    /// Base64 with the URL alphabet and no padding (RFC 7515 §2).
    public static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
