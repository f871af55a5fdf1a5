/// The card that counts a person's runs without a card of their own ("+3 more runs · 1 failing"),
/// so a run that finds every slot taken is never silently dropped. It is an ongoing activity like
/// any other, so it takes one of the person's slots (`SlotPlanner`), and it is desired state
/// reconciled like a run's card: coalesced, heartbeaten, ended (with a last frame) when no run
/// overflows any more. It uses the generic template whatever the runs' cards use: one bar, one
/// line of text, one link (to the newest run without a card).
public enum SummaryCard {
    /// The owner its session is assigned to: no run has this key (GitHub's run ids start at 1).
    public static let owner = RunKey(repository: "", runID: 0, attempt: 0)

    /// Its slug: `gh-more`, and for a routed person the same `-u` suffix as their run cards.
    public static func slug(person: String) -> String {
        person.isEmpty ? prefix : prefix + "-u" + SHA256.hexDigest(of: person).prefix(8)
    }

    public static func isSummary(_ slug: String) -> Bool { slug.hasPrefix(prefix) }

    static let prefix = "gh-more"

    public static func identity(person: String, target: ActivityTarget?) -> ActivityIdentity {
        ActivityIdentity(slug: slug(person: person), name: "GitHub: more runs", target: target)
    }

    /// One run counted on the card, as the engine knows it.
    public struct Entry: Sendable, Equatable {
        public var state: RunState
        public var rank: SlotRank
        public var preempted: Bool

        public init(state: RunState, rank: SlotRank, preempted: Bool) {
            self.state = state
            self.rank = rank
            self.preempted = preempted
        }
    }

    /// What the card shows for `entries` (the runs without a card, best first); with none, its
    /// last frame before it ends. `changedAt`: when the list last changed, which coalescing waits
    /// after, so a burst of runs arriving costs one update rather than one each.
    public static func desired(
        entries: [Entry], settings: ActivitySettings, changedAt: UnixTime?
    ) -> DesiredActivity {
        var content: [String: JSONValue] = [
            "template": "generic",
            "icon": .string(String(settings.icon.prefix(128))),
        ]
        guard let newest = entries.max(by: { isOlder($0.state, $1.state) }) else {
            content["progress"] = 1
            content["state"] = "Every run has its own card"
            content["subtitle"] = "No more runs waiting for a card"
            content["accent_color"] = .string(EndAppearance.grey)
            return DesiredActivity(run: owner, content: content, window: nil, isFinal: true, step: 0)
        }
        let failing = entries.filter { $0.rank == .failing }.count
        let waiting = entries.filter { $0.rank == .waiting }.count
        var headline = "+\(entries.count) more run" + (entries.count == 1 ? "" : "s")
        if failing > 0 { headline += " · \(failing) failing" }
        if waiting > 0 { headline += " · \(waiting) waiting" }
        content["subtitle"] = .string(ActivityContentBuilder.clip(headline, to: ActivityContentBuilder.textLimit))
        let name = newest.state.repository.name + " / " + (newest.state.workflowName ?? "workflow")
        // Repository and workflow names are whoever pushed them: one plain line, within the limit.
        // Clamped by Unicode scalars, as PushWard counts (an emoji with a skin tone is several).
        content["state"] = .string(
            CardText.fitted("Newest: " + name, to: ActivityContentBuilder.textLimit))
        let fractions = entries.map { StepPlanner.plan(for: $0.state).liveJobFraction }
        content["progress"] = .number(ActivityContentBuilder.rounded(fractions.reduce(0, +) / Double(fractions.count)))
        content["accent_color"] = .string(failing > 0 ? StepPalette.failed : waiting > 0 ? "orange" : "blue")
        let counter = "+\(entries.count)"
        if counter.count <= 4 { content["compact_label"] = .string(counter) }
        let url = newest.state.runURL
        if LinkURL.isAcceptable(url) {
            content["url"] = .string(url)
            content["url_action"] = ["url": .string(url), "title": "Newest run"]
        }
        return DesiredActivity(run: owner, content: content, window: nil, isFinal: false, changedAt: changedAt, step: 0)
    }

    static func isOlder(_ lhs: RunState, _ rhs: RunState) -> Bool {
        (lhs.attemptStartedAt, lhs.key) < (rhs.attemptStartedAt, rhs.key)
    }
}
