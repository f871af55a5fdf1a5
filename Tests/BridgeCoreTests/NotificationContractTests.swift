import BridgeCore
import BridgeTestSupport
import Testing

/// The fake PushWard's reading of `POST /notifications` (`PUSHWARD-MORE.md` §2, §3): what it must
/// refuse with 422, since the end-to-end tests trust it to.
@Suite("notification contract")
struct NotificationContractTests {
    static let minimal: JSONValue = ["title": "t", "body": "b"]

    static func with(_ key: String, _ value: JSONValue) -> JSONValue {
        var object = minimal.objectValue ?? [:]
        object[key] = value
        return .object(object)
    }

    @Test("the smallest valid body, and every member the bridge sends, pass")
    func valid() {
        #expect(NotificationContract.violations(Self.minimal).isEmpty)
        let full: JSONValue = [
            "title": .string(String(repeating: "é", count: 256)), "body": .string(String(repeating: "x", count: 4_096)),
            "level": "time-sensitive", "thread_id": .string(String(repeating: "a", count: 128)),
            "collapse_id": .string(String(repeating: "c", count: 64)), "url": "https://github.com/a/b/actions/runs/1",
            "activity_slug": "gh-1", "source": "pushward-bridge", "source_display_name": "GitHub Actions",
            "target": ["members": ["usr_1"], "groups": ["payments"]],
            "actions": [
                [
                    "id": "approve", "title": "Approve", "url": "https://hooks.example.com/actions/abc",
                    "method": "POST", "authentication_required": true,
                ],
                [
                    "id": "reject", "title": "Reject", "url": "https://hooks.example.com/actions/def",
                    "destructive": true,
                ],
            ],
        ]
        #expect(NotificationContract.violations(full).isEmpty)
    }

    @Test("each rule the contract states is refused")
    func refused() {
        let cases: [(JSONValue, String)] = [
            (["body": "b"], "title"),
            (["title": "t"], "body"),
            (Self.with("title", ""), "title"),
            (Self.with("title", .string(String(repeating: "x", count: 257))), "title"),
            // 256 characters but 257 scalars: the stricter count decides.
            (Self.with("title", .string(String(repeating: "x", count: 255) + "🇫🇷")), "title"),
            (Self.with("body", .string(String(repeating: "x", count: 4_097))), "body"),
            (Self.with("thread_id", .string(String(repeating: "x", count: 129))), "thread_id"),
            (Self.with("collapse_id", .string(String(repeating: "x", count: 65))), "collapse_id"),
            (Self.with("level", "loud"), "level"),
            (Self.with("url", "javascript:alert(1)"), "url"),
            (Self.with("url", "https://"), "url"),
            (Self.with("push", "yes"), "push"),
            (Self.with("target", ["members": .array(Array(repeating: "u", count: 101))]), "target"),
            (Self.with("target", ["teams": ["x"]]), "target"),
            (Self.with("image", "https://x/y.png"), "image"),
            (Self.with("actions", "approve"), "actions"),
            (Self.with("actions", .array(Array(repeating: ["id": "a", "title": "A"], count: 11))), "actions"),
            (Self.with("actions", [["title": "A"]]), "actions[0].id"),
            (Self.with("actions", [["id": "a"]]), "actions[0].title"),
            (
                Self.with("actions", [["id": "a", "title": .string(String(repeating: "x", count: 65))]]),
                "actions[0].title"
            ),
            (Self.with("actions", [["id": "a", "title": "A"], ["id": "a", "title": "B"]]), "actions[1].id"),
            (
                Self.with("actions", [["id": "a", "title": "A", "url": "https://h/x", "method": "SEND"]]),
                "actions[0].method"
            ),
            (Self.with("actions", [["id": "a", "title": "A", "url": "javascript:x"]]), "actions[0].url"),
            (Self.with("actions", [["id": "a", "title": "A", "url": "app://x", "method": "POST"]]), "actions[0].url"),
            (
                Self.with("actions", [["id": "a", "title": "A", "authentication_required": "yes"]]),
                "actions[0].authentication_required"
            ),
            (Self.with("actions", [["id": "a", "title": "A", "kind": "webhook"]]), "actions[0].kind"),
            (
                Self.with(
                    "actions", [["id": "a", "title": "A", "body": .string(String(repeating: "x", count: 1_025))]]),
                "actions[0].body"
            ),
            (
                Self.with(
                    "actions",
                    [["id": "a", "title": "A", "headers": ["X": .string(String(repeating: "x", count: 1_024))]]]),
                "actions[0].headers"
            ),
        ]
        for (body, field) in cases {
            #expect(NotificationContract.violations(body).map(\.field).contains(field), "\(field): \(body)")
        }
    }
}
