import BridgeCore
import BridgeTestSupport
import Testing

/// `dueRequests` with a pacer: the requests decided are admitted most important first, only as
/// many as the window has room for, and what waits is decided again when there is room.
@Suite("Paced dispatch")
struct PacedDispatchTests {
    static let start: UnixTime = 1_700_000_000

    static var settings: ActivitySettings {
        var settings = ActivitySettings.pushingEveryChange
        settings.endDelay = 0
        settings.endDisplayTime = 0
        settings.minUpdateInterval = 0
        return settings
    }

    /// A run of its own repository, so that each has its own card.
    static func script(_ index: Int) -> RunScript {
        var script = RunScript(runID: 100 + index, runNumber: index, start: start, firstJobID: 10_000 * index)
        script.repository = Repository(
            fullName: "acme/repo\(index)", htmlURL: "https://github.com/acme/repo\(index)", defaultBranch: "main")
        return script
    }

    /// Sends everything due at `now`, each acknowledged at once, until nothing is.
    @discardableResult
    static func drain(_ engine: inout BridgeEngine, at now: UnixTime) -> [PlannedRequest] {
        var sent: [PlannedRequest] = []
        for _ in 0..<64 {
            let due = engine.dueRequests(at: now, inFlight: [])
            guard !due.isEmpty else { break }
            for planned in due { engine.acknowledge(planned, at: now) }
            sent += due
        }
        return sent
    }

    @Test("short of room, end frames and ends go before creates, which go before the rest; the rest waits for room")
    func endsFirst() {
        var engine = BridgeEngine(settings: Self.settings)
        let finishing = (1...3).map(Self.script)
        for script in finishing {
            for event in script.deliveries(waves: [[RunScript.Job("build")]], complete: false) {
                _ = engine.receive(event, at: Self.start)
            }
        }
        Self.drain(&engine, at: Self.start)
        let later = Self.start + 10
        // Twelve new runs and three ends, all at once, with room for six requests a minute.
        for index in 4...15 { _ = engine.receive(Self.script(index).run("requested", at: 0), at: later) }
        for script in finishing {
            _ = engine.receive(script.run("completed", at: 40, conclusion: "success"), at: later)
        }
        engine.pacer = RequestPacer(settings: .init(limit: 6, window: 60))

        let first = engine.dueRequests(at: later, inFlight: [])
        #expect(first.map(\.kind) == [.finalFrame, .finalFrame, .finalFrame, .create, .create])
        for planned in first { engine.acknowledge(planned, at: later) }
        // One request of room is left, and only the end frames' share reaches it.
        let second = engine.dueRequests(at: later, inFlight: [])
        #expect(second.map(\.kind) == [.end])
        for planned in second { engine.acknowledge(planned, at: later) }
        #expect(engine.dueRequests(at: later + 30, inFlight: []).isEmpty)
        #expect(engine.nextWakeup(after: later + 30) == later + 60, "when the window's first requests leave it")
        let third = engine.dueRequests(at: later + 60, inFlight: [])
        #expect(third.prefix(2).map(\.kind) == [.end, .end])
        #expect(third.count == 5 && third.dropFirst(2).allSatisfy { BridgeEngine.tier(of: $0.kind) == .starting })
        let held = engine.takePacerHeld()
        #expect(held[.starting, default: 0] > 0)
    }

    @Test("the preempted list is a read like any other: asked only with room in the pacer, which it takes")
    func preemptedCheckIsPaced() {
        var engine = BridgeEngine(settings: Self.settings)
        for event in Self.script(1).deliveries(waves: [[RunScript.Job("build")]], complete: false) {
            _ = engine.receive(event, at: Self.start)
        }
        Self.drain(&engine, at: Self.start)
        // The card shows, and the list is wanted (as at start), but the window is full.
        engine.pacer = RequestPacer(settings: .init(limit: 4, window: 60))
        while engine.admitPaced(.ending, at: Self.start) {}
        #expect(engine.wantsPreemptedCheck)
        let askedWhileFull = engine.takePreemptedCheck(at: Self.start + 1)
        #expect(!askedWhileFull, "no room for a read")
        #expect(engine.wantsPreemptedCheck, "still wanted, asked when there is room")
        // The window moves on: the read goes, and takes its room.
        #expect(engine.pacer?.used(at: Self.start + 61) == 0)
        let askedWithRoom = engine.takePreemptedCheck(at: Self.start + 61)
        #expect(askedWithRoom)
        #expect(engine.pacer?.used(at: Self.start + 61) == 1, "the read is counted in the window")
    }

    @Test("without a pacer nothing is held: the same turn sends every card's request")
    func unpaced() {
        // Three people's runs, four each: every card has a slot (five per person), so only the
        // pacer could hold one back.
        var engine = BridgeEngine(
            configuration: EngineConfiguration(
                settings: Self.settings,
                routing: RoutingSettings(members: ["dev0": "usr_0", "dev1": "usr_1", "dev2": "usr_2"])))
        for index in 1...12 {
            var script = Self.script(index)
            script.actor = "dev\(index % 3)"
            _ = engine.receive(script.run("requested", at: 0), at: Self.start)
        }
        #expect(engine.dueRequests(at: Self.start, inFlight: []).count == 12)
    }

    @Test("widgets take the pacer's room as upkeep; a 429 to one pauses the cards as well")
    func widgetsPaced() throws {
        var engine = BridgeEngine(
            configuration: EngineConfiguration(
                settings: Self.settings, widgets: [WidgetSettings(slug: "ci-widget", name: "CI")]))
        engine.pacer = RequestPacer(settings: .init(limit: 2, window: 60))
        _ = engine.receive(Self.script(1).run("requested", at: 0), at: Self.start)
        // The upkeep share of 2 is 1: the card's create takes it, the widget waits for room.
        #expect(engine.dueRequests(at: Self.start, inFlight: []).map(\.kind) == [.create])
        #expect(engine.dueWidgetRequests(at: Self.start, inFlight: []).isEmpty)
        #expect(engine.nextWakeup(after: Self.start) == Self.start + 60)
        let widget = try #require(engine.dueWidgetRequests(at: Self.start + 60, inFlight: []).first)
        let limited = PushWardProblem(status: 429, code: "rate_limit.exceeded", retryAfter: 30)
        _ = engine.handleWidget(.problem(limited), for: widget, at: Self.start + 60)
        #expect(engine.gate.rateLimitedUntil == Self.start + 90, "one pause for every request")
        _ = engine.receive(Self.script(2).run("requested", at: 0), at: Self.start + 61)
        #expect(engine.dueRequests(at: Self.start + 61, inFlight: []).isEmpty)
    }

    @Test("PushWard's 429 to a widget, an alert or a read pauses the cards too, for its Retry-After")
    func rateLimitPausesEverything() {
        var engine = BridgeEngine(settings: Self.settings)
        engine.pacer = RequestPacer()
        _ = engine.receive(Self.script(1).run("requested", at: 0), at: Self.start)
        let until = engine.noteRateLimited(retryAfter: 60, at: Self.start)
        #expect(until == Self.start + 60)
        #expect(engine.dueRequests(at: Self.start + 1, inFlight: []).isEmpty)
        let paused = engine.admitPaced(.reading, at: Self.start + 1)
        #expect(!paused)
        #expect(engine.nextWakeup(after: Self.start + 1) == Self.start + 60)
        #expect(engine.dueRequests(at: Self.start + 60, inFlight: []).map(\.kind) == [.create])
        let resumed = engine.admitPaced(.reading, at: Self.start + 60)
        #expect(resumed)
    }
}
