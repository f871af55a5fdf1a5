/// The cards and widgets with a request out: nothing more is planned for one until its answer
/// comes back (or the request is abandoned), so ten changes during one request become one
/// follow-up computed from the latest state. Alerts keep theirs in `AlertOutbox`.
struct InFlight: Sendable, Equatable {
    private(set) var cards: Set<String> = []
    private(set) var widgets: Set<String> = []

    mutating func send(cards slugs: [String]) { cards.formUnion(slugs) }
    mutating func send(widgets slugs: [String]) { widgets.formUnion(slugs) }
    mutating func answered(card slug: String) { cards.remove(slug) }
    mutating func answered(widget slug: String) { widgets.remove(slug) }
}
