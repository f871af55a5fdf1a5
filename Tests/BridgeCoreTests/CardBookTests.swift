import BridgeTestSupport
import Testing

@testable import BridgeCore

/// The cards feature on its own: which cards are decided when, what a change records, the floor
/// under the progress bar, and the push economy that picks a new run's level.
@Suite("card book")
struct CardBookTests {
    typealias F = EngineFeatureFixtures
    static let run = RunKey(repository: "acme/widgets", runID: 1, attempt: 1)

    static func session(_ slug: String, owner: RunKey? = run) -> ActivitySession {
        var session = ActivitySession(identity: ActivityIdentity(slug: slug, name: "CI"))
        if let owner { session.assign(to: owner) }
        return session
    }

    @Test("the cards due are those something happened to and those whose time came; taking them empties both")
    func due() {
        var book = CardBook()
        var changes = EngineChanges()
        book.put(Self.session("a"), on: "a", changes: &changes)
        book.put(Self.session("b"), on: "b", changes: &changes)
        book.put(Self.session("c"), on: "c", changes: &changes)
        #expect(changes.slugs == ["a", "b", "c"])
        book.markDirty("b")
        book.setDue("a", at: 100)
        book.setDue("c", at: 200)
        #expect(book.nextDue(after: 0) == 100)
        let first = book.takeDue(at: 150)
        #expect(first == ["a", "b"])
        #expect(book.dueTime(of: "a") == nil, "deciding records the next time again")
        let again = book.takeDue(at: 150)
        #expect(again.isEmpty)
        #expect(book.nextDue(after: 150) == 200)
        book.markDirty(["a", "b"])
        let later = book.takeDue(at: 200)
        #expect(later == ["a", "b", "c"])
    }

    @Test("a change to a card is written and decided again, unless it cannot change what the card sends")
    func update() {
        var book = CardBook()
        var changes = EngineChanges()
        let missing = book.update("missing", changes: &changes) { $0.failures += 1 }
        #expect(!missing)
        #expect(changes.isEmpty)

        book.restore(Self.session("a"), floor: nil)
        _ = book.takeDue(at: 0)
        let held = book.update("a", redecide: false, changes: &changes) { $0.pendingSince = 5 }
        #expect(held)
        #expect(book["a"]?.pendingSince == 5)
        #expect(changes.slugs == ["a"])
        let notDue = book.takeDue(at: 10)
        #expect(notDue.isEmpty)
        book.update("a", changes: &changes) { $0.failures = 2 }
        let due = book.takeDue(at: 10)
        #expect(due == ["a"])
    }

    @Test("the progress bar never moves back within a run's step, and starts afresh for another run")
    func progressFloor() {
        var book = CardBook()
        var changes = EngineChanges()
        func desired(_ progress: Double, run: RunKey = Self.run) -> DesiredActivity {
            DesiredActivity(
                run: run, content: ["progress": .number(progress), "current_step": 2], window: nil, isFinal: false)
        }
        var first = desired(0.6)
        book.applyProgressFloor(to: &first, slug: "a", changes: &changes)
        #expect(changes.slugs == ["a"])
        var back = desired(0.4)
        var unchanged = EngineChanges()
        book.applyProgressFloor(to: &back, slug: "a", changes: &unchanged)
        #expect(back.content["progress"] == .number(0.6))
        #expect(unchanged.isEmpty, "the floor did not move")

        var other = desired(0.1, run: RunKey(repository: "acme/widgets", runID: 2, attempt: 1))
        book.applyProgressFloor(to: &other, slug: "a", changes: &changes)
        #expect(other.content["progress"] == .number(0.1))
        book.clearFloor("a")
        #expect(book.progressFloors["a"] == nil)
    }

    @Test("a card let go of leaves nothing behind: session, floor, due time")
    func forget() {
        var book = CardBook()
        book.restore(Self.session("a"), floor: ProgressFloor(run: Self.run, step: 0, progress: 0.5))
        book.setDue("a", at: 50)
        book.forget("a")
        #expect(book["a"] == nil)
        #expect(book.progressFloors["a"] == nil)
        #expect(book.nextDue(after: 0) == nil)
        let due = book.takeDue(at: 100)
        #expect(due.isEmpty)
    }

    @Test("the planner has no say without `auto` or a limit; with both it picks a level that stays in force")
    func budget() throws {
        var book = CardBook()
        var changes = EngineChanges()
        let state = F.running(RunScript(runID: 1))
        var fixed = ActivitySettings()
        fixed.fidelity = .full
        book.use(budget: PushBudget(used: 0, limit: 1_000, resetsAt: state.lastChangeAt + 86_400))
        let configured = book.budgetDecision(for: state, settings: fixed)
        #expect(configured == nil)
        book.use(budget: PushBudget(used: 0, limit: nil, resetsAt: nil))
        let unlimited = book.budgetDecision(for: state, settings: ActivitySettings())
        #expect(unlimited == nil)

        book.use(budget: PushBudget(used: 0, limit: 1_000_000, resetsAt: state.lastChangeAt + 20 * 86_400))
        book.recordArrival(at: state.lastChangeAt, changes: &changes)
        #expect(changes.arrivalHours == [Int(state.lastChangeAt / 3_600)])
        let planned = book.budgetDecision(for: state, settings: ActivitySettings())
        let decision = try #require(planned)
        #expect(decision.level != nil)
        #expect(book.levelInForce == decision.level)

        book.countUpdate()
        book.countUpdate()
        #expect(book.budget?.used == 2)
    }

    @Test("cards in use are those a run holds that have not ended")
    func cardsInUse() {
        var book = CardBook()
        var ended = Self.session("b")
        ended.phase = .ended
        book.restore(Self.session("a"), floor: nil)
        book.restore(ended, floor: nil)
        book.restore(Self.session("c", owner: nil), floor: nil)
        #expect(book.cardsInUse == 1)
        #expect(book.slugs(where: { $1.phase == .ended && $1.owner != nil }) == ["b"])
    }
}
