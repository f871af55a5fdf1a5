/// The engine's bookkeeping for PushWard's ongoing cards per person: who the planner gave a slot,
/// who is on each summary card, and what it needs to plan again cheaply. Recomputed from runs and
/// sessions after a restart, so none of it is stored (each run's `CardPlacement` is).
struct SlotBook: Sendable {
    /// Per person ("" for the account), the runs that hold a slot.
    private(set) var holders: [String: Set<RunKey>] = [:]
    /// Per person, the live runs counted on the summary card, best first.
    private(set) var summary: [String: [RunKey]] = [:]
    /// When each person's summary list last changed: its coalescing counts from there.
    private(set) var summaryChangedAt: [String: UnixTime] = [:]
    /// The person each card belongs to, and each person's cards.
    private(set) var personOfSlug: [String: String] = [:]
    private(set) var slugsOfPerson: [String: Set<String>] = [:]
    /// People whose cards changed since they were last planned.
    private var dirtyPeople: Set<String> = []
    /// Set when sessions or runs were put back from storage: the index is rebuilt before planning.
    private(set) var indexStale = false
    /// Cards whose request to go `ongoing` is out: counted as ongoing until answered.
    private(set) var ongoingClaims: Set<String> = []
    /// Cards that lost their slot while showing: PushWard may have evicted them without the
    /// bridge hearing yet, so their next PATCH says `state` (required on a preempted activity,
    /// harmless on an ongoing one) until one that does is acknowledged.
    private(set) var displaced: Set<String> = []
    /// Cards held back because their person already shows as many ongoing cards as it may.
    private(set) var waitingForRoom: Set<String> = []
    /// `GET /activities?state=preempted` should be asked: at start, and when an answer suggests
    /// PushWard evicted a card.
    private(set) var preemptedCheckWanted = true
    /// When that list was last asked for: asked again no sooner than `preemptedCheckSpacing`
    /// after, so a PushWard that does not answer is not asked in a loop.
    private(set) var preemptedCheckAskedAt: UnixTime?
    static let preemptedCheckSpacing: UnixTime = 10

    // MARK: The index of cards by person

    /// Files the card on `slug` under `person`.
    mutating func index(_ slug: String, person: String) {
        personOfSlug[slug] = person
        slugsOfPerson[person, default: []].insert(slug)
    }

    /// Something happened to one of `person`'s cards: they are planned again.
    mutating func markDirty(person: String) {
        dirtyPeople.insert(person)
    }

    /// The people to plan again, in order; none after.
    mutating func takeDirtyPeople() -> [String] {
        defer { dirtyPeople.removeAll() }
        return dirtyPeople.sorted()
    }

    /// Sessions or runs were put back from storage: the index is rebuilt before the next plan.
    mutating func markStale() {
        indexStale = true
    }

    /// Whether the index is to be rebuilt; asking clears it.
    mutating func takeStale() -> Bool {
        defer { indexStale = false }
        return indexStale
    }

    // MARK: The plan

    /// Records the runs holding `person`'s slots; returns those that held them before.
    mutating func setHolders(_ runs: Set<RunKey>, of person: String) -> Set<RunKey> {
        let before = holders[person] ?? []
        holders[person] = runs.isEmpty ? nil : runs
        return before
    }

    /// Records the runs on `person`'s summary card; false when the list is as it was.
    mutating func setSummary(_ listed: [RunKey], of person: String, at now: UnixTime) -> Bool {
        guard (summary[person] ?? []) != listed else { return false }
        summary[person] = listed.isEmpty ? nil : listed
        summaryChangedAt[person] = now
        return true
    }

    /// The card on `slug` lost its slot while showing.
    mutating func markDisplaced(_ slug: String) {
        displaced.insert(slug)
    }

    // MARK: Requests and answers

    /// A request for `slug` to go ongoing is out (`true`), or none is (`false`).
    mutating func claimOngoing(_ slug: String, _ claimed: Bool) {
        if claimed { ongoingClaims.insert(slug) } else { ongoingClaims.remove(slug) }
    }

    /// The card on `slug` waits for one of its person's cards to stop showing (`true`), or does not.
    mutating func waitForRoom(_ slug: String, _ waiting: Bool) {
        if waiting { waitingForRoom.insert(slug) } else { waitingForRoom.remove(slug) }
    }

    /// A request for `slug` that said `state` was answered: PushWard knows how it shows.
    mutating func settleDisplaced(_ slug: String) {
        displaced.remove(slug)
    }

    /// An answer suggests PushWard evicted a card: its list of preempted ones is wanted.
    mutating func wantPreemptedCheck() {
        preemptedCheckWanted = true
    }

    /// The list is not wanted now: nothing it could correct (`asked` false), or it was asked at
    /// `now`.
    mutating func notePreemptedCheck(askedAt now: UnixTime?) {
        if let now {
            preemptedCheckAskedAt = now
        } else {
            preemptedCheckWanted = false
        }
    }

    /// The list came: the next eviction is asked about at once; only unanswered asks are spaced.
    mutating func preemptedCheckAnswered() {
        preemptedCheckWanted = false
        preemptedCheckAskedAt = nil
    }

    /// Lets go of an ended card the engine no longer holds.
    mutating func forget(_ slug: String) {
        guard let person = personOfSlug.removeValue(forKey: slug) else { return }
        slugsOfPerson[person]?.remove(slug)
        if slugsOfPerson[person]?.isEmpty == true { slugsOfPerson[person] = nil }
        waitingForRoom.remove(slug)
        ongoingClaims.remove(slug)
        displaced.remove(slug)
    }
}
