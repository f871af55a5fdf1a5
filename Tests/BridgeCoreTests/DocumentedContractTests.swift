import BridgeCore
import BridgeTestSupport
import Testing

/// Rules of PushWard's OpenAPI document the fake had not held the bridge to: the slug pattern,
/// `dismissal_ttl` and `sound`, image fields (padded base64 thumbhash, a host the phone can look
/// up), and what a tap action's `method`, `headers` and `body` need. Each with hostile text.
@Suite struct DocumentedContractTests {
    private static let content: [String: JSONValue] = [
        "template": "generic", "progress": 0.5, "state": "Build",
    ]

    private static func violations(_ extra: [String: JSONValue]) -> [String] {
        ContractValidator.validateContent(content.merging(extra) { $1 }).map(\.field)
    }

    @Test(arguments: [
        "ok", "A-b_9", String(repeating: "a", count: 128),
    ])
    func slugsOfThePatternPass(slug: String) {
        let request = PushWardRequest(
            method: .post, slug: slug, body: ["slug": .string(slug), "name": "CI", "priority": 1])
        #expect(ContractValidator.validate(request, stored: nil).isEmpty)
    }

    @Test(arguments: [
        "-lead", "_lead", "has space", "dot.ted", "é", "emoji🚀", "nul\u{0}", "bidi\u{202E}",
        String(repeating: "a", count: 129),
    ])
    func slugsOffThePatternAreRefused(slug: String) {
        let request = PushWardRequest(
            method: .post, slug: slug, body: ["slug": .string(slug), "name": "CI", "priority": 1])
        #expect(ContractValidator.validate(request, stored: nil).map(\.field) == ["slug"])
    }

    @Test func dismissalTTLAndSoundAreTheDocumentedOnes() {
        let stored = StoredActivity(state: "ongoing", content: Self.content, name: "CI", priority: 1)
        func patch(_ body: JSONValue) -> [String] {
            ContractValidator.validate(PushWardRequest(method: .patch, slug: "ci", body: body), stored: stored)
                .map(\.field)
        }
        #expect(patch(["dismissal_ttl": 0]).isEmpty)
        #expect(patch(["dismissal_ttl": 14_400]).isEmpty)
        #expect(patch(["dismissal_ttl": .null]).isEmpty)
        #expect(patch(["dismissal_ttl": 14_401]) == ["dismissal_ttl"])
        #expect(patch(["sound": "chime"]).isEmpty)
        #expect(patch(["sound": "klaxon"]) == ["sound"])
        let post = PushWardRequest(
            method: .post, slug: "ci", body: ["slug": "ci", "name": "CI", "priority": 1, "dismissal_ttl": 0])
        #expect(ContractValidator.validate(post, stored: nil).isEmpty, "0 takes the card off the Lock Screen at once")
    }

    @Test func theThumbhashIsPaddedStandardBase64() {
        #expect(Self.violations(["image_thumbhash": "GYpSpSh4eHt4eHh4eHh4eHh4iIeH"]).isEmpty)
        #expect(Self.violations(["image_thumbhash": "3OcRJYB4d3h/iIeHeEh3eIhw+j3A"]).isEmpty)
        #expect(Self.violations(["image_thumbhash": "YJqGPQw7sFlslqhFafSE+Q6oJ1h2iHB2Rw=="]).isEmpty)
        for bad in ["GYpSpSh4eHt4eHh4eHh4eHh4iIe", "GYpSpSh4-_t4eHh4eHh4eHh4iIeH", "a===", "=AAA", "", "🚀🚀🚀🚀"] {
            #expect(Self.violations(["image_thumbhash": .string(bad)]) == ["image_thumbhash"], "\(bad)")
        }
    }

    @Test func theImageHostIsOneThePhoneCanLookUp() {
        for good in [
            "https://img.example.com/a.png", "https://img.example.com:8443/a.png", "https://[2001:db8::1]/a.png",
            "https://192.0.2.1/a.png", "https://example.com./a.png",
        ] {
            #expect(Self.violations(["image_url": .string(good)]).isEmpty, "\(good)")
        }
        for bad in [
            "https://exa_mple.com/a.png", "https://-bad.example.com/a.png", "https://a..b/a.png",
            "https://exämple.com/a.png", "https://example.com:port/a.png", "https://[zz::1]/a.png",
            "https://" + String(repeating: "a", count: 64) + ".com/a.png",
        ] {
            #expect(Self.violations(["image_url": .string(bad)]) == ["image_url"], "\(bad)")
        }
    }

    @Test func anActionsRequestPartsNeedAWebURLAndOneKilobyteEach() {
        let web: JSONValue = [
            "url": "https://ci.example.com/hook", "method": "POST", "headers": ["X-Token": "t"], "body": "{}",
        ]
        #expect(Self.violations(["tap_action": web]).isEmpty)
        #expect(
            Self.violations([
                "url_action": ["url": "https://x.example.com", "body": .string(String(repeating: "é", count: 512))]
            ]).isEmpty, "1,024 bytes")
        #expect(
            Self.violations([
                "url_action": ["url": "https://x.example.com", "body": .string(String(repeating: "é", count: 513))]
            ])
                == ["url_action.body"])
        let bigHeaders: JSONValue = [
            "url": "https://x.example.com", "headers": ["X": .string(String(repeating: "a", count: 1_024))],
        ]
        #expect(Self.violations(["secondary_url_action": bigHeaders]) == ["secondary_url_action.headers"])
        #expect(
            Self.violations(["tap_action": ["url": "https://x.example.com", "headers": ["X": 1]]]) == [
                "tap_action.headers"
            ])
        #expect(
            Self.violations(["tap_action": ["url": "shortcuts://run", "method": "POST"]]).contains("tap_action.url"))
    }

    @Test func aWidgetPatchRepeatsItsTemplate() {
        let stored: [String: JSONValue] = ["template": "progress", "value": 0.1]
        #expect(
            WidgetContract.patchViolations(["content": ["template": "progress", "value": 0.2]], stored: stored).isEmpty)
        #expect(
            WidgetContract.patchViolations(["content": ["value": 0.2]], stored: stored).map(\.field) == [
                "content.template"
            ])
    }
}
