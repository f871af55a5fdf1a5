import BridgeCore
import Foundation
import Testing

@testable import PushWardClient

/// What the bridge reads from a PushWard refusal decides how long it waits and what the log and
/// `explain` say, so each form the contract allows is read here: problem bodies, the legacy
/// `{"error": "…"}`, `Retry-After` as seconds and as an HTTP date, `retry_after_ms`.
@Suite("Problem decoder")
struct ProblemDecoderTests {
    /// 2026-12-01T00:00:00Z.
    static let now: UnixTime = 1_796_083_200

    static func decode(_ status: Int, _ body: String, retryAfter: String? = nil) -> PushWardProblem {
        ProblemDecoder.decode(status: status, body: Data(body.utf8), retryAfterHeader: retryAfter, now: now)
    }

    @Test("an RFC 9457 problem: code, detail, retry_after_ms")
    func problemBody() {
        let problem = Self.decode(
            429,
            #"{"type":"about:blank","title":"Too Many Requests","status":429,"code":"rate_limited","detail":"slow down","retry_after_ms":1500}"#
        )
        #expect(problem == PushWardProblem(status: 429, code: "rate_limited", detail: "slow down", retryAfter: 1.5))
    }

    @Test("a validation problem's errors[].location are kept: the refused field (RefusedField)")
    func fieldLocations() {
        let problem = Self.decode(
            422,
            #"{"status":422,"title":"Unprocessable Entity","detail":"validation failed","errors":[{"location":"body.content.step_labels[3]","message":"expected length <= 32"},{"message":"no location"}]}"#
        )
        #expect(problem.fieldLocations == ["body.content.step_labels[3]"])
        #expect(
            Self.decode(422, #"{"status":422,"detail":"progress must be between 0.0 and 1.0"}"#).fieldLocations == nil)
    }

    @Test("the legacy body: {\"error\": \"…\"} is the detail, and a nested error code is read")
    func legacyBody() {
        #expect(Self.decode(400, #"{"error":"slug is required"}"#).detail == "slug is required")
        #expect(Self.decode(400, #"{"error":"slug is required"}"#).code == nil)
        let nested = Self.decode(404, #"{"error":{"code":"activity.not_found"},"message":"no such activity"}"#)
        #expect(nested.code == "activity.not_found" && nested.detail == "no such activity")
        #expect(Self.decode(422, #"{"title":"Unprocessable"}"#).detail == "Unprocessable")
    }

    @Test("a body that is not JSON is kept as the detail, cut at 200 bytes; an empty one is nil")
    func nonJSONBody() {
        #expect(Self.decode(502, "  <html>Bad gateway</html>\n").detail == "<html>Bad gateway</html>")
        #expect(Self.decode(502, String(repeating: "x", count: 500)).detail?.count == 200)
        #expect(Self.decode(503, "").detail == nil)
        #expect(Self.decode(503, "").code == nil)
    }

    @Test("Retry-After in seconds")
    func retryAfterSeconds() {
        #expect(Self.decode(429, "{}", retryAfter: "120").retryAfter == 120)
        #expect(Self.decode(429, "{}", retryAfter: " 0 ").retryAfter == 0)
    }

    @Test("Retry-After as an HTTP date counts from now, in all three forms; a past date is 0")
    func retryAfterDate() {
        #expect(Self.decode(429, "{}", retryAfter: "Tue, 01 Dec 2026 00:01:30 GMT").retryAfter == 90)
        #expect(Self.decode(429, "{}", retryAfter: "Tuesday, 01-Dec-26 00:00:10 GMT").retryAfter == 10)
        #expect(Self.decode(429, "{}", retryAfter: "Tue Dec  1 00:02:00 2026").retryAfter == 120)
        #expect(Self.decode(429, "{}", retryAfter: "Sun, 06 Nov 1994 08:49:37 GMT").retryAfter == 0)
    }

    @Test("a garbled Retry-After is ignored, not read as a wait")
    func garbledRetryAfter() {
        for header in ["", "soon", "-5", "1.5", "12abc", "Tue, 32 Dec 2026 00:00:00 GMT"] {
            #expect(Self.decode(429, "{}", retryAfter: header).retryAfter == nil, "\(header)")
        }
    }

    @Test("the longer of Retry-After and retry_after_ms wins")
    func longerWaitWins() {
        #expect(Self.decode(429, #"{"retry_after_ms":30000}"#, retryAfter: "5").retryAfter == 30)
        #expect(Self.decode(429, #"{"retry_after_ms":2000}"#, retryAfter: "5").retryAfter == 5)
        #expect(Self.decode(429, #"{"retry_after_ms":-1}"#).retryAfter == nil)
    }

    @Test("quota.exceeded: kind, used, limit and reset_at (number or RFC 3339); other codes leave them nil")
    func quotaRefusal() {
        let quota = Self.decode(
            429,
            #"{"code":"quota.exceeded","detail":"monthly limit","kind":"live_activity_updates","used":250,"limit":250,"reset_at":"2027-01-01T00:00:00Z"}"#
        )
        #expect(quota.quotaKind == "live_activity_updates" && quota.quotaUsed == 250 && quota.quotaLimit == 250)
        #expect(quota.resetAt == 1_798_761_600)
        #expect(Self.decode(429, #"{"code":"quota.exceeded","reset_at":1798761600}"#).resetAt == 1_798_761_600)
        let other = Self.decode(400, #"{"code":"validation","kind":"field","used":1,"limit":2}"#)
        #expect(other.quotaKind == nil && other.quotaUsed == nil && other.quotaLimit == nil)
    }
}
