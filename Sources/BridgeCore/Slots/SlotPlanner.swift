/// Decides which of one person's live runs hold an ongoing card, when more are live than
/// PushWard shows a person at once (five: iOS's per-app limit). Pure: the engine gives it what it
/// knows of each run and applies the plan.
///
/// The bridge chooses rather than letting PushWard evict: PushWard would evict the
/// lowest-priority, then oldest, card, which without ranks is simply the oldest, perhaps the
/// failing run people need. The rules:
/// - With more runs than slots, one slot is the summary card ("+3 more runs · 1 failing"), so no
///   run is silently dropped; the others go to the best-ranked runs (`SlotRank`, then newest).
/// - A card already shown keeps its slot against a newer run of the same class: replacing it
///   would end a card someone may be watching and spend a create and a first frame on the
///   newcomer, for no better information. Only a higher class takes a shown card's slot.
/// - A card that is showing its end frame keeps its slot whatever comes: it ends in seconds.
/// - A run whose card PushWard preempted takes a slot again only by outranking, by class, a run
///   that holds one (never just because a slot is free: that is how two cards evict each other
///   in turn), and only once: restarted, it keeps its slot until its run ends (the engine pins
///   it), so the bridge never lets PushWard preempt a card twice in a run; preempted a second
///   time all the same (by another client of the account), it stays on the summary until it ends.
/// - A run that finished without ever holding a card gets one only from a slot nobody live
///   wants (its end frame then shows as before); otherwise it is dropped, as its run is over.
public enum SlotPlanner {
    /// What the planner needs to know of one run that wants a card.
    public struct Candidate: Sendable, Equatable {
        public var run: RunKey
        public var rank: SlotRank
        /// When the attempt started: the newer, the better within a class.
        public var startedAt: UnixTime
        /// The card was created on PushWard for this run (it shows, or is about to).
        public var holdsCard: Bool
        /// The card is showing its end frame or the run is over with a card: it keeps its slot.
        public var pinned: Bool
        /// PushWard preempted the run's card and it has not been restarted.
        public var preempted: Bool
        /// Preempted after a restart (or twice): never restarted again for this run.
        public var barred: Bool
        /// The run is over and never held a card.
        public var finished: Bool

        public init(
            run: RunKey, rank: SlotRank, startedAt: UnixTime, holdsCard: Bool = false, pinned: Bool = false,
            preempted: Bool = false, barred: Bool = false, finished: Bool = false
        ) {
            self.run = run
            self.rank = rank
            self.startedAt = startedAt
            self.holdsCard = holdsCard
            self.pinned = pinned
            self.preempted = preempted
            self.barred = barred
            self.finished = finished
        }
    }

    /// The decision for one person.
    public struct Plan: Sendable, Equatable {
        /// The runs that hold an ongoing card, best first.
        public var cards: [RunKey]
        /// The live runs counted on the summary card instead, best first.
        public var summary: [RunKey]
        /// Runs that finished without a card while no slot was free: they get none.
        public var dropped: [RunKey]
        /// Whether the summary card is wanted (it takes one of the slots).
        public var showsSummary: Bool { !summary.isEmpty }
    }

    /// The plan for one person with `slots` ongoing cards (1–5). With one slot there is no room
    /// for a summary beside a run: the best run holds it and the rest are counted nowhere but in
    /// `explain`, which is why the configuration asks for at least two.
    public static func plan(_ candidates: [Candidate], slots: Int) -> Plan {
        let slots = max(1, slots)
        let live = candidates.filter { !$0.finished }
        let overflowing = live.count > slots
        let capacity = overflowing && slots > 1 ? slots - 1 : slots
        let pinned = live.filter(\.pinned)
        let open = live.filter { !$0.pinned && !$0.preempted && !$0.barred }.sorted(by: isBetter)
        var chosen = pinned.sorted(by: isBetter) + open.prefix(max(0, capacity - pinned.count))
        // A preempted run comes back only in place of a held run it outranks by class.
        for returning in live.filter({ $0.preempted && !$0.barred && !$0.pinned }).sorted(by: isBetter) {
            guard chosen.count >= capacity,
                let weakest = chosen.indices.filter({ !chosen[$0].pinned }).min(by: { isBetter(chosen[$1], chosen[$0]) }
                ),
                chosen[weakest].rank < returning.rank
            else { continue }
            chosen[weakest] = returning
        }
        chosen.sort(by: isBetter)
        let chosenRuns = Set(chosen.map(\.run))
        let summary = live.filter { !chosenRuns.contains($0.run) }.sorted(by: isBetter)
        // Finished runs that never showed: only into slots no live run wants (and none while the
        // summary is up: it says the person has more runs than cards).
        var free = summary.isEmpty ? max(0, slots - chosen.count) : 0
        var dropped: [RunKey] = []
        for finished in candidates.filter(\.finished).sorted(by: isBetter) {
            if free > 0 {
                chosen.append(finished)
                free -= 1
            } else {
                dropped.append(finished.run)
            }
        }
        return Plan(cards: chosen.map(\.run), summary: summary.map(\.run), dropped: dropped)
    }

    /// The order of worthiness: class, then a card already shown, then newest (run id and key
    /// break ties, so the plan never depends on input order).
    static func isBetter(_ lhs: Candidate, _ rhs: Candidate) -> Bool {
        if lhs.rank != rhs.rank { return lhs.rank > rhs.rank }
        if lhs.holdsCard != rhs.holdsCard { return lhs.holdsCard }
        if lhs.startedAt != rhs.startedAt { return lhs.startedAt > rhs.startedAt }
        return lhs.run > rhs.run
    }
}
