/// Where a run stood among its person's cards, kept with the run so `runs show`, `explain` and
/// the status page can say, per run, whether it had a card, was counted on the summary card, or
/// was preempted, and when. Written by the engine as it applies each `SlotPlanner.Plan`.
public struct CardPlacement: Sendable, Equatable, Codable {
    public enum Place: String, Sendable, Equatable, Codable {
        /// The run holds one of its person's ongoing cards.
        case card
        /// No slot was free: the run is counted on the summary card.
        case summary
        /// PushWard preempted the run's card; the run is counted on the summary card.
        case preempted
        /// The run finished while on the summary: it never got a card.
        case dropped
    }

    public var place: Place
    /// When the run came to `place`.
    public var since: UnixTime
    /// The class the run was ranked in when last planned.
    public var rank: SlotRank
    /// When the run first held a card; nil if it never did.
    public var cardAt: UnixTime?
    /// When the run was first counted on the summary card; nil if it never was.
    public var summaryAt: UnixTime?
    /// When PushWard last preempted the run's card; nil if it never did.
    public var preemptedAt: UnixTime?
    /// How often its card was preempted (a second time, it is never restarted); nil for none.
    public var preemptions: Int?
    /// When the bridge restarted the preempted card, because the run came to outrank a held one.
    public var restartedAt: UnixTime?

    public init(place: Place, since: UnixTime, rank: SlotRank) {
        self.place = place
        self.since = since
        self.rank = rank
    }

    /// For `runs show --json` and the admin API: every time as seconds since 1970, null when unset.
    public var json: JSONValue {
        func time(_ value: UnixTime?) -> JSONValue { value.map { .number($0) } ?? .null }
        return [
            "place": .string(place.rawValue), "since": .number(since), "rank": .string(rank.label),
            "card_at": time(cardAt), "summary_at": time(summaryAt), "preempted_at": time(preemptedAt),
            "preemptions": .number(Double(preemptions ?? 0)), "restarted_at": time(restartedAt),
        ]
    }

    /// What `explain` says of it, in a sentence.
    public func sentence(slots: Int, formatTime: (UnixTime) -> String) -> String {
        let ranked = "ranked \(rank.label)"
        var text: String
        switch place {
        case .card:
            text = "It holds one of its person's \(slots) ongoing cards (\(ranked)) since \(formatTime(since))."
        case .summary:
            text =
                "Every one of its person's \(slots) ongoing cards was taken by a run ranked at least as high, so it "
                + "is counted on the summary card (\(ranked)) since \(formatTime(since)) until a slot frees."
        case .preempted:
            text =
                "PushWard preempted its card at \(formatTime(preemptedAt ?? since)) (another card went ongoing for a "
                + "person who already had five); it is counted on the summary card (\(ranked))"
                + ((preemptions ?? 0) >= 2
                    ? " until it ends: preempted twice, it is not restarted."
                    : ", and gets its card back only by outranking a run that holds one.")
        case .dropped:
            text =
                "It finished at \(formatTime(since)) while every slot was taken: it never got a card of its own, only "
                + "its count on the summary card."
        }
        if place != .card, let cardAt { text += " It had a card from \(formatTime(cardAt))." }
        if let restartedAt {
            text += " Its card was restarted at \(formatTime(restartedAt)) when it came to outrank a held one."
        }
        return text
    }

    /// One line for people: `card since 12:00:03 (failing)`, `summary since …, preempted at …`.
    public func summaryLine(formatTime: (UnixTime) -> String) -> String {
        var parts = ["\(place.rawValue) since \(formatTime(since)) (\(rank.label))"]
        if let cardAt, place != .card { parts.append("had a card from \(formatTime(cardAt))") }
        if let summaryAt, place != .summary { parts.append("on the summary from \(formatTime(summaryAt))") }
        if let preemptedAt { parts.append("preempted at \(formatTime(preemptedAt))") }
        if let restartedAt { parts.append("restarted at \(formatTime(restartedAt))") }
        return parts.joined(separator: ", ")
    }
}
