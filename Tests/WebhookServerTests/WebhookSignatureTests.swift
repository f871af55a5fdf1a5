import Foundation
import Testing

@testable import WebhookServer

@Suite("WebhookSignature")
struct WebhookSignatureTests {
    /// GitHub's published example (docs: "Validating webhook deliveries").
    static let publishedSecret = "It's a Secret to Everybody"
    static let publishedBody = Data("Hello, World!".utf8)
    static let publishedSignature = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"

    /// The test secret published with the recorded delivery (see the fixtures' upstream README).
    static let recordedSecret = "402786017574bd28f9d8f7a18648939751c47fe09077d56e10f0444f14fbb73b"

    @Test("GitHub's published test vector signs and verifies")
    func publishedVector() {
        #expect(
            WebhookSignature.sign(body: Self.publishedBody, secret: Self.publishedSecret) == Self.publishedSignature)
        let check = WebhookSignature.check(
            body: Self.publishedBody, header: Self.publishedSignature, secrets: [Self.publishedSecret])
        #expect(check == .valid(secretIndex: 0))
    }

    @Test("The recorded real delivery verifies with its recorded X-Hub-Signature-256")
    func recordedDelivery() throws {
        let body = try Fixtures.data("workflow_run.in_progress.dynamic-codeql.body.json")
        #expect(body.count == 19497)
        let capture = try JSONSerialization.jsonObject(
            with: Fixtures.data("workflow_run.in_progress.dynamic-codeql.capture.json"))
        let headers = try #require((capture as? [String: Any])?["headers"] as? [String: String])
        let header = try #require(headers["x-hub-signature-256"])
        #expect(header.hasPrefix("sha256=1b7880bb"))

        #expect(
            WebhookSignature.check(body: body, header: header, secrets: [Self.recordedSecret]) == .valid(secretIndex: 0)
        )
        #expect(WebhookSignature.sign(body: body, secret: Self.recordedSecret) == header)
        // The capture's base64 copy of the body is the same bytes.
        let encoded = try #require((capture as? [String: Any])?["body_raw_base64"] as? String)
        #expect(Data(base64Encoded: encoded) == body)
    }

    @Test("Rotation: the second configured secret matches and is reported as index 1")
    func rotation() {
        let secrets = ["the-new-secret", Self.publishedSecret]
        let check = WebhookSignature.check(body: Self.publishedBody, header: Self.publishedSignature, secrets: secrets)
        #expect(check == .valid(secretIndex: 1))
        let first = WebhookSignature.check(
            body: Self.publishedBody, header: Self.publishedSignature,
            secrets: [Self.publishedSecret, "other", Self.publishedSecret])
        #expect(first == .valid(secretIndex: 0))
    }

    @Test("A missing header is .missing")
    func missing() {
        #expect(
            WebhookSignature.check(body: Self.publishedBody, header: nil, secrets: [Self.publishedSecret]) == .missing)
    }

    @Test(
        "Malformed headers are .malformed",
        arguments: [
            "",
            "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",  // no prefix
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e1",  // 63 digits
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17a",  // 65 digits
            "sha256=",  // no digest
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e1g",  // non-hex
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e1 ",  // space
            "sha1=01dc10d0c83e72ed246219cdd91669667fe2ca59",  // the legacy header's form
            "SHA256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",  // prefix case
            " sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",  // leading space
        ])
    func malformed(header: String) {
        #expect(
            WebhookSignature.check(body: Self.publishedBody, header: header, secrets: [Self.publishedSecret])
                == .malformed)
    }

    @Test("Uppercase hex is accepted: the comparison is on the decoded digest")
    func uppercaseHex() {
        let upper = "sha256=" + Self.publishedSignature.dropFirst(7).uppercased()
        #expect(
            WebhookSignature.check(body: Self.publishedBody, header: upper, secrets: [Self.publishedSecret])
                == .valid(secretIndex: 0))
    }

    @Test("One flipped bit of the body is a .mismatch")
    func oneBitChanged() throws {
        var body = try Fixtures.data("workflow_run.in_progress.dynamic-codeql.body.json")
        let header = WebhookSignature.sign(body: body, secret: Self.recordedSecret)
        body[body.startIndex + 9_000] ^= 0x01
        #expect(WebhookSignature.check(body: body, header: header, secrets: [Self.recordedSecret]) == .mismatch)
    }

    @Test("A wrong secret, or no secret at all, is a .mismatch")
    func wrongSecret() {
        #expect(
            WebhookSignature.check(body: Self.publishedBody, header: Self.publishedSignature, secrets: ["nope", ""])
                == .mismatch)
        #expect(
            WebhookSignature.check(body: Self.publishedBody, header: Self.publishedSignature, secrets: []) == .mismatch)
    }

    @Test("An empty body and an empty secret still sign (HMAC of nothing is well defined)")
    func emptyInputs() {
        // openssl dgst -sha256 -hmac "" < /dev/null
        let signature = WebhookSignature.sign(body: Data(), secret: "")
        #expect(signature == "sha256=b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
        #expect(WebhookSignature.check(body: Data(), header: signature, secrets: [""]) == .valid(secretIndex: 0))
    }
}
