import Testing

@testable import BridgeCore

/// The slot plan's bookkeeping on its own: the index of cards by person, the plan's holders and
/// summary lists, and the claims and checks that answers settle.
@Suite("slot book")
struct SlotBookTests {
    static let run = RunKey(repository: "acme/widgets", runID: 1, attempt: 1)

    @Test("cards are indexed by person, planned again once each when dirty, and let go of whole")
    func index() {
        var book = SlotBook()
        book.index("a", person: "octocat")
        book.index("b", person: "octocat")
        book.markDirty(person: "octocat")
        book.markDirty(person: "")
        book.markDirty(person: "octocat")
        let dirty = book.takeDirtyPeople()
        let again = book.takeDirtyPeople()
        #expect(dirty == ["", "octocat"])
        #expect(again.isEmpty)
        book.claimOngoing("a", true)
        book.waitForRoom("a", true)
        book.markDisplaced("a")
        book.forget("a")
        #expect(book.personOfSlug["a"] == nil)
        #expect(book.slugsOfPerson["octocat"] == ["b"])
        #expect(book.ongoingClaims.isEmpty && book.waitingForRoom.isEmpty && book.displaced.isEmpty)
        book.forget("b")
        #expect(book.slugsOfPerson["octocat"] == nil)
    }

    @Test("a stale index is rebuilt once")
    func stale() {
        var book = SlotBook()
        book.markStale()
        let first = book.takeStale()
        let second = book.takeStale()
        #expect(first && !second)
    }

    @Test("the plan's holders replace the last ones, returned; the summary list changes only when it differs")
    func plan() {
        var book = SlotBook()
        let none = book.setHolders([Self.run], of: "octocat")
        #expect(none.isEmpty)
        let before = book.setHolders([], of: "octocat")
        #expect(before == [Self.run])
        #expect(book.holders["octocat"] == nil)

        let listed = book.setSummary([Self.run], of: "octocat", at: 10)
        let same = book.setSummary([Self.run], of: "octocat", at: 20)
        #expect(listed && !same)
        #expect(book.summaryChangedAt["octocat"] == 10, "coalescing counts from the change, not the replan")
        let emptied = book.setSummary([], of: "octocat", at: 30)
        #expect(emptied && book.summary["octocat"] == nil)
    }

    @Test("the preempted list: wanted at start, spaced when asked, asked again at once once answered")
    func preemptedCheck() {
        var book = SlotBook()
        #expect(book.preemptedCheckWanted)
        book.notePreemptedCheck(askedAt: 5)
        #expect(book.preemptedCheckWanted && book.preemptedCheckAskedAt == 5)
        book.preemptedCheckAnswered()
        #expect(!book.preemptedCheckWanted && book.preemptedCheckAskedAt == nil)
        book.wantPreemptedCheck()
        #expect(book.preemptedCheckWanted)
        book.notePreemptedCheck(askedAt: nil)
        #expect(!book.preemptedCheckWanted)
    }
}
