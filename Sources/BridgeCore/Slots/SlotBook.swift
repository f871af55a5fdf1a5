/// The engine's bookkeeping for PushWard's ongoing cards per person: who the planner gave a slot,
/// who is on each summary card, and what it needs to plan again cheaply. Recomputed from runs and
/// sessions after a restart, so none of it is stored (each run's `CardPlacement` is).
struct SlotBook: Sendable {
    /// Per person ("" for the account), the runs that hold a slot.
    var holders: [String: Set<RunKey>] = [:]
    /// Per person, the live runs counted on the summary card, best first.
    var summary: [String: [RunKey]] = [:]
    /// When each person's summary list last changed: its coalescing counts from there.
    var summaryChangedAt: [String: UnixTime] = [:]
    /// The person each card belongs to, and each person's cards.
    var personOfSlug: [String: String] = [:]
    var slugsOfPerson: [String: Set<String>] = [:]
    /// People whose cards changed since they were last planned.
    var dirtyPeople: Set<String> = []
    /// Set when sessions or runs were put back from storage: the index is rebuilt before planning.
    var indexStale = false
    /// Cards whose request to go `ongoing` is out: counted as ongoing until answered.
    var ongoingClaims: Set<String> = []
    /// Cards that lost their slot while showing: PushWard may have evicted them without the
    /// bridge hearing yet, so their next PATCH says `state` (required on a preempted activity,
    /// harmless on an ongoing one) until one that does is acknowledged.
    var displaced: Set<String> = []
    /// Cards held back because their person already shows as many ongoing cards as it may.
    var waitingForRoom: Set<String> = []
    /// `GET /activities?state=preempted` should be asked: at start, and when an answer suggests
    /// PushWard evicted a card.
    var preemptedCheckWanted = true
    /// When that list was last asked for: asked again no sooner than `preemptedCheckSpacing`
    /// after, so a PushWard that does not answer is not asked in a loop.
    var preemptedCheckAskedAt: UnixTime?
    static let preemptedCheckSpacing: UnixTime = 10

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
