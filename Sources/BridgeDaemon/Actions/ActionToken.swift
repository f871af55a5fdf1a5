import BridgeCore
import Foundation

/// A button's capability: 33 random bytes as 44 base64url characters. The first 12 (9 bytes) are
/// the selector the store looks the token up by; the other 32 (24 bytes, 192 bits) are the secret,
/// of which only a SHA-256 is stored. A press's spend matches the selector and that digest in one
/// conditional update (`BridgeDatabase.spendActionToken`): digests are what is compared, so the
/// comparison's timing says nothing about the secret, and a copy of the database presses nothing.
struct ActionToken: Sendable, Equatable {
    static let selectorCharacters = 12
    static let length = ActionTokenPath.tokenLength

    var selector: String
    var verifier: String

    var text: String { selector + verifier }

    /// The SHA-256 of the secret part: what `action_tokens.verifier_hash` holds.
    var verifierHash: Data { Data(SHA256.digest(Array(verifier.utf8))) }

    /// A fresh token from the system's CSPRNG (`getrandom` on Linux).
    static func mint() -> ActionToken {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<33).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let text = base64URL(bytes)
        return ActionToken(
            selector: String(text.prefix(selectorCharacters)), verifier: String(text.dropFirst(selectorCharacters)))
    }

    /// The token in a request path segment, or nil when it cannot be one (wrong length or alphabet):
    /// such a request is a 404 without a lookup.
    init?(path segment: Substring) {
        guard ActionTokenPath.token(in: ActionSettings.pathPrefix + segment) != nil else { return nil }
        selector = String(segment.prefix(Self.selectorCharacters))
        verifier = String(segment.dropFirst(Self.selectorCharacters))
    }

    init(selector: String, verifier: String) {
        self.selector = selector
        self.verifier = verifier
    }

    private static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
