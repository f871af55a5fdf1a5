import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

/// What the bridge does with each answer PushWard can give, through the dispatch turn the daemon
/// and `render` share (`BridgeEngine.dueRequests`) and the answer handling (`handle`), with a
/// scripted PushWard and a simulated clock: rate limits, a spent quota, a refused key, a deleted
/// activity, a refused body, server errors, the circuit breaker and a dropped connection. The
/// end-to-end tests over real HTTP keep one case of each (`DispatchEndToEndTests`).
@Suite("Failure policy")
struct FailurePolicyTests {
    /// The core with a live card, a clock in seconds from the script's start, and the requests out.
    struct Dispatch {
        static let script = RunScript()
        var engine = BridgeEngine(settings: .pushingEveryChange)
        var inFlight: Set<String> = []
        var nextJob = 50_001

        static func time(_ offset: Double) -> UnixTime { script.start + offset }

        /// A run with one job running, its card created and its first frame acknowledged, at 0…1 s.
        static func live() -> Dispatch {
            var dispatch = Dispatch()
            dispatch.deliver(script.run("requested", at: 0), at: 0)
            dispatch.deliver(script.job(50_000, "build", "in_progress", createdAt: 0, startedAt: 0), at: 0)
            #expect(dispatch.settle(at: 1).map(\.kind) == [.create, .firstFrame])
            return dispatch
        }

        mutating func deliver(_ event: WebhookEvent, at offset: Double) {
            _ = engine.receive(event, at: Self.time(offset))
        }

        /// A visible change: one more job starts.
        mutating func change(at offset: Double) {
            deliver(
                Self.script.job(nextJob, "test \(nextJob)", "in_progress", createdAt: offset, startedAt: offset),
                at: offset)
            nextJob += 1
        }

        /// One dispatch turn: what goes out now; each goes in flight until answered.
        mutating func turn(at offset: Double) -> [PlannedRequest] {
            let due = engine.dueRequests(at: Self.time(offset), inFlight: inFlight)
            inFlight.formUnion(due.map(\.request.slug))
            return due
        }

        mutating func answer(_ planned: PlannedRequest, _ answer: PushWardAnswer, at offset: Double) -> AnswerEffect {
            inFlight.remove(planned.request.slug)
            return engine.handle(answer, for: planned, at: Self.time(offset), jitter: 0.5)
        }

        /// Turns at `offset`, each request acknowledged, until nothing is due; what was sent.
        mutating func settle(at offset: Double) -> [PlannedRequest] {
            var sent: [PlannedRequest] = []
            for _ in 0..<16 {
                let due = turn(at: offset)
                guard !due.isEmpty else { break }
                for planned in due { #expect(answer(planned, .success(status: 200), at: offset) == .acknowledged) }
                sent += due
            }
            return sent
        }

        /// The one request a change at `offset` causes.
        mutating func update(at offset: Double) throws -> PlannedRequest {
            change(at: offset)
            let due = turn(at: offset)
            try #require(due.count == 1)
            return due[0]
        }

        var session: ActivitySession? { engine.sessions.values.first }
    }

    static func problem(_ status: Int, _ code: String? = nil, retryAfter: Double? = nil, resetAt: UnixTime? = nil)
        -> PushWardAnswer
    {
        .problem(
            PushWardProblem(status: status, code: code, detail: "scripted", retryAfter: retryAfter, resetAt: resetAt))
    }

    @Test("2xx: the acknowledged content moves on and the next change goes as a PATCH")
    func success() throws {
        var dispatch = Dispatch.live()
        let update = try dispatch.update(at: 5)
        #expect(update.kind == .update && update.request.method == .patch)
        #expect(update.request.body["content"]?.objectValue?["total_steps"] == 2)
        #expect(dispatch.answer(update, .success(status: 200), at: 5) == .acknowledged)
        #expect(dispatch.session?.acknowledged?.content["total_steps"] == 2)
        #expect(dispatch.turn(at: 5).isEmpty)
    }

    @Test("one request per card at a time: changes while it is out become one follow-up with the latest content")
    func inFlightRule() throws {
        var dispatch = Dispatch.live()
        let first = try dispatch.update(at: 5)
        dispatch.change(at: 6)
        dispatch.change(at: 7)
        #expect(dispatch.turn(at: 7).isEmpty)
        #expect(dispatch.answer(first, .success(status: 200), at: 8) == .acknowledged)
        // The spacing between two updates (a second here) holds the follow-up to 9 s.
        #expect(dispatch.turn(at: 8).isEmpty)
        let followUp = dispatch.turn(at: 9)
        #expect(followUp.count == 1)
        #expect(followUp.first?.request.body["content"]?.objectValue?["total_steps"] == 4)
        #expect(dispatch.turn(at: 9).isEmpty)
    }

    @Test("429: every card waits Retry-After (capped at two minutes), then the latest content goes")
    func rateLimited() throws {
        var dispatch = Dispatch.live()
        let update = try dispatch.update(at: 5)
        #expect(
            dispatch.answer(update, Self.problem(429, "rate_limit.exceeded", retryAfter: 30), at: 5)
                == .rateLimited(until: Dispatch.time(35)))
        dispatch.change(at: 10)
        #expect(dispatch.turn(at: 34).isEmpty)
        #expect(dispatch.engine.gate.blockedUntil(at: Dispatch.time(34)) == Dispatch.time(35))
        #expect(dispatch.turn(at: 35).count == 1)

        var capped = Dispatch.live()
        let next = try capped.update(at: 5)
        #expect(
            capped.answer(next, Self.problem(429, retryAfter: 3_600), at: 5)
                == .rateLimited(until: Dispatch.time(5 + DispatchGate.rateLimitCap)))
    }

    @Test("429 quota.exceeded: nothing is sent until the quota resets (an hour when PushWard does not say)")
    func quotaExhausted() throws {
        var dispatch = Dispatch.live()
        let update = try dispatch.update(at: 5)
        let reset = Dispatch.time(86_400)
        #expect(
            dispatch.answer(update, Self.problem(429, "quota.exceeded", resetAt: reset), at: 5)
                == .quotaExhausted(until: reset))
        #expect(dispatch.engine.gate.quotaExhausted(at: Dispatch.time(80_000)))
        dispatch.change(at: 60)
        #expect(dispatch.turn(at: 80_000).isEmpty)
        #expect(dispatch.turn(at: 86_400).count == 1)

        var unknown = Dispatch.live()
        let next = try unknown.update(at: 5)
        #expect(
            unknown.answer(next, Self.problem(429, "quota.exceeded"), at: 5)
                == .quotaExhausted(until: Dispatch.time(3_605)))
    }

    @Test("401 and 403: the key is paused, longer each time, with a reason that says which; a 2xx clears it")
    func unauthorized() throws {
        var dispatch = Dispatch.live()
        let update = try dispatch.update(at: 5)
        #expect(
            dispatch.answer(update, Self.problem(401), at: 5)
                == .unauthorized(status: 401, until: Dispatch.time(5 + DispatchGate.firstAuthPause)))
        #expect(dispatch.engine.gate.reason?.contains("wrong or revoked") == true)
        #expect(dispatch.turn(at: 64).isEmpty)
        let retry = dispatch.turn(at: 65)
        #expect(retry.count == 1)
        #expect(
            dispatch.answer(retry[0], Self.problem(403), at: 65)
                == .unauthorized(status: 403, until: Dispatch.time(65 + 2 * DispatchGate.firstAuthPause)))
        #expect(dispatch.engine.gate.reason?.contains("activity:manage") == true)
        let third = dispatch.turn(at: 185)
        #expect(dispatch.answer(third[0], .success(status: 200), at: 185) == .acknowledged)
        #expect(dispatch.engine.gate.authFailures == 0 && dispatch.engine.gate.reason == nil)
    }

    @Test("404 on a PATCH: the activity was deleted; it is created again and drawn whole")
    func recreated() throws {
        var dispatch = Dispatch.live()
        let update = try dispatch.update(at: 5)
        #expect(dispatch.answer(update, Self.problem(404, "activity.not_found"), at: 5) == .recreating)
        #expect(dispatch.session?.phase == .needsCreate)
        let again = dispatch.settle(at: 5)
        #expect(again.map(\.request.method) == [.post, .patch])
        #expect(again.first?.request.slug == update.request.slug)
    }

    @Test("422: the card is sent whole once; a refused body is never sent again, and the next change goes")
    func rejected() throws {
        var dispatch = Dispatch.live()
        let update = try dispatch.update(at: 5)
        #expect(
            dispatch.answer(update, Self.problem(422, "activity.content_invalid"), at: 5)
                == .rejected(detail: "422 activity.content_invalid: scripted"))
        #expect(dispatch.session?.rejectedBody == update.request.body)
        // A refused merge patch may have met content the bridge does not know: the whole frame.
        let whole = dispatch.turn(at: 6)
        #expect(whole.count == 1)
        let fields = whole.first?.request.body["content"]?.objectValue?.keys.count ?? 0
        #expect(fields > update.request.body["content"]?.objectValue?.keys.count ?? 0)
        #expect(
            dispatch.answer(whole[0], Self.problem(422, "activity.content_invalid"), at: 6)
                == .rejected(detail: "422 activity.content_invalid: scripted"))
        // Refused again: nothing more for the same content, however long the clock runs.
        #expect(dispatch.turn(at: 7).isEmpty)
        #expect(dispatch.turn(at: 600).isEmpty)
        let next = try dispatch.update(at: 700)
        #expect(next.request.method == .patch && next.request.body != whole[0].request.body)
    }

    @Test("5xx and a dropped connection: the card retries after a backoff, with its latest content")
    func transientFailures() throws {
        for failure in [Self.problem(503), Self.problem(500), .noAnswer(reason: "connection reset by peer")] {
            var dispatch = Dispatch.live()
            let update = try dispatch.update(at: 5)
            guard case .willRetry(let retryAt, let opened) = dispatch.answer(update, failure, at: 5) else {
                Issue.record("\(failure): not retried")
                continue
            }
            #expect(retryAt == Dispatch.time(5) + RetryPolicy.delay(afterFailures: 1, jitter: 0.5))
            #expect(!opened && dispatch.session?.failures == 1)
            dispatch.change(at: 5.1)
            #expect(dispatch.turn(at: retryAt - Dispatch.script.start - 0.01).isEmpty)
            let retry = dispatch.turn(at: retryAt - Dispatch.script.start)
            #expect(retry.count == 1)
            #expect(retry.first?.request.body["content"]?.objectValue?["total_steps"] == 3)
        }
    }

    @Test("503 with Retry-After waits at least that long; 409 with a retry hint is retried, without one refused")
    func retryHints() throws {
        var dispatch = Dispatch.live()
        let update = try dispatch.update(at: 5)
        #expect(
            dispatch.answer(update, Self.problem(503, retryAfter: 45), at: 5)
                == .willRetry(retryAt: Dispatch.time(50), breakerOpened: false))

        var limited = Dispatch.live()
        let next = try limited.update(at: 5)
        guard
            case .willRetry = limited.answer(next, Self.problem(409, "activity.limit_exceeded", retryAfter: 10), at: 5)
        else {
            Issue.record("409 with a retry hint was not retried")
            return
        }
        var conflict = Dispatch.live()
        let other = try conflict.update(at: 5)
        #expect(
            conflict.answer(other, Self.problem(409, "conflict"), at: 5) == .rejected(detail: "409 conflict: scripted"))
    }

    @Test("the breaker opens after repeated failures, then lets one probe through; its 2xx closes it")
    func circuitBreaker() throws {
        var dispatch = Dispatch.live()
        var time = 5.0
        var opened: [Bool] = []
        for _ in 0..<CircuitBreaker.threshold {
            // The first goes with a change; each later one is the retry falling due.
            var due = dispatch.turn(at: time)
            if due.isEmpty { due = [try dispatch.update(at: time)] }
            try #require(due.count == 1)
            guard case .willRetry(let retryAt, let didOpen) = dispatch.answer(due[0], Self.problem(502), at: time)
            else {
                Issue.record("502 not retried")
                return
            }
            opened.append(didOpen)
            time = retryAt - Dispatch.script.start
        }
        #expect(opened == Array(repeating: false, count: CircuitBreaker.threshold - 1) + [true])
        #expect(dispatch.engine.gate.breaker.state == .open)
        // A second card wants to go too; while open, nothing does.
        var second = RunScript(runID: 9_100, firstJobID: 70_000)
        second.repository = Repository(fullName: "acme/gadgets", htmlURL: "https://github.com/acme/gadgets")
        dispatch.deliver(second.run("requested", at: 0), at: time)
        #expect(dispatch.turn(at: time).isEmpty)
        let probeTime = time + CircuitBreaker.longestCoolDown
        let probe = dispatch.turn(at: probeTime)
        #expect(probe.count == 1, "half open: one probe, not \(probe.count)")
        #expect(dispatch.answer(probe[0], .success(status: 200), at: probeTime) == .acknowledged)
        #expect(dispatch.engine.gate.breaker.state == .closed)
        #expect(dispatch.turn(at: probeTime).count >= 1)
    }
}
