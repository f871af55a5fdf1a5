import BridgeCore
import BridgeTestSupport
import Testing

/// The pacer's own arithmetic: a sliding window that never holds more than the limit, a share
/// per tier so the less important cannot use the room of the more important, and the time room
/// comes back, all from times given to it.
@Suite("Request pacer")
struct RequestPacerTests {
    @Test("no window of the configured length ever holds more than the limit; room comes back as the oldest leave")
    func slidingWindow() {
        var pacer = RequestPacer(settings: .init(limit: 10, window: 60))
        for second in 0..<10 {
            do {
                let admitted = pacer.admit(.ending, at: Double(second))
                #expect(admitted)
            }
        }
        do {
            let admitted = pacer.admit(.ending, at: 9.5)
            #expect(!admitted, "the eleventh inside a minute")
        }
        #expect(pacer.used(at: 9.5) == 10)
        #expect(pacer.roomAt(for: .ending, after: 9.5) == 60, "when the first, sent at 0, leaves the window")
        do {
            let admitted = pacer.admit(.ending, at: 59.999)
            #expect(!admitted)
        }
        do {
            let admitted = pacer.admit(.ending, at: 60)
            #expect(admitted)
        }
        do {
            let admitted = pacer.admit(.ending, at: 60.5)
            #expect(!admitted, "the one sent at 1 is still inside")
        }
        do {
            let admitted = pacer.admit(.ending, at: 61)
            #expect(admitted)
        }
        // Every window of 60 s over what was admitted holds at most 10.
        #expect(pacer.used(at: 61) == 10)
        #expect(pacer.used(at: 200) == 0)
    }

    @Test("each tier fills the window only up to its share: ends all of it, reads the least")
    func shares() {
        var pacer = RequestPacer(settings: .init(limit: 120, window: 60))
        #expect(RequestPacer.Tier.allCases.map { pacer.share(of: $0) } == [120, 108, 96, 84, 72])
        var admitted = 0
        while pacer.admit(.updating, at: 0) { admitted += 1 }
        #expect(admitted == 96, "updates stop with a fifth of the window left")
        #expect(!pacer.hasRoom(for: .upkeep, at: 0) && !pacer.hasRoom(for: .reading, at: 0))
        var starts = 0
        while pacer.admit(.starting, at: 1) { starts += 1 }
        #expect(starts == 12)
        var ends = 0
        while pacer.admit(.ending, at: 2) { ends += 1 }
        #expect(ends == 12, "the last tenth is the end frames' alone")
        // A tiny limit still lets every tier through, one at a time.
        let tiny = RequestPacer(settings: .init(limit: 3, window: 60))
        #expect(RequestPacer.Tier.allCases.map { tiny.share(of: $0) } == [3, 2, 1, 1, 1])
    }

    @Test("what was held is counted by tier, and the most important of it says when to wake")
    func heldAndWakeup() {
        var pacer = RequestPacer(settings: .init(limit: 5, window: 10))
        // The updates' share of 5 is 3 (a request less for each tier above them).
        for at in [0.0, 1, 2] {
            do {
                let admitted = pacer.admit(.updating, at: at)
                #expect(admitted)
            }
        }
        #expect(pacer.nextWakeup(after: 3) == nil, "nothing waits")
        do {
            let admitted = pacer.admit(.upkeep, at: 3)
            #expect(!admitted)
        }
        do {
            let admitted = pacer.admit(.updating, at: 3)
            #expect(!admitted)
        }
        #expect(pacer.waiting == .updating)
        #expect(pacer.nextWakeup(after: 3) == 10, "when the first update leaves the window")
        #expect(pacer.takeHeld() == [.upkeep: 1, .updating: 1])
        #expect(pacer.takeHeld().isEmpty)
        pacer.beginTurn()
        #expect(pacer.waiting == nil && pacer.nextWakeup(after: 3) == nil)
    }

    @Test("a clock that steps back admits nothing dated before what went out")
    func clockStepsBack() {
        var pacer = RequestPacer(settings: .init(limit: 2, window: 60))
        do {
            let admitted = pacer.admit(.ending, at: 1_000)
            #expect(admitted)
        }
        do {
            let admitted = pacer.admit(.ending, at: 400)
            #expect(admitted)
        }
        do {
            let admitted = pacer.admit(.ending, at: 401)
            #expect(!admitted)
        }
        #expect(pacer.roomAt(for: .ending, after: 401) == 1_060)
    }
}
