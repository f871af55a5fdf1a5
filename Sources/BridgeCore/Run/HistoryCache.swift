/// The finished-run history of the workflows seen lately, least recently used dropped first.
///
/// A lookup happens when a run is first seen (its shape and step estimates) and when it finishes;
/// a miss costs one indexed read of at most `RunHistory.runsKeptPerWorkflow` runs, so the cache
/// saves reads for busy workflows and bounds memory for everything else.
public struct HistoryCache: Sendable, Equatable {
    /// One repository's workflow: what an entry holds the history of.
    public struct Workflow: Sendable, Hashable {
        public var repository: String
        public var name: String

        public init(repository: String, name: String) {
            self.repository = repository
            self.name = name
        }
    }

    /// 256 workflows: every workflow of a few hundred busy repositories that runs within any hour,
    /// so a run's start and end (minutes apart) hit the entry its start read. An entry is at most
    /// 20 runs of about a dozen steps (some 20 KB), so the cache stays near 5 MB at worst.
    public static let defaultCapacity = 256

    public let capacity: Int
    private var entries: [Workflow: Entry] = [:]
    /// Counts uses: an entry's stamp says how recently it was used.
    private var tick: UInt64 = 0

    private struct Entry: Sendable, Equatable {
        var history: RunHistory
        var lastUse: UInt64
    }

    public init(capacity: Int = Self.defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    public var count: Int { entries.count }

    /// The history held for `workflow`, marked as just used; nil on a miss.
    public mutating func lookup(_ workflow: Workflow) -> RunHistory? {
        guard entries[workflow] != nil else { return nil }
        tick += 1
        entries[workflow]?.lastUse = tick
        return entries[workflow]?.history
    }

    /// Holds `history` for `workflow`, dropping the least recently used entry when full.
    public mutating func store(_ history: RunHistory, for workflow: Workflow) {
        tick += 1
        if entries[workflow] == nil, entries.count >= capacity,
            let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
        {
            entries[oldest] = nil
        }
        entries[workflow] = Entry(history: history, lastUse: tick)
    }

    /// Adds a finished run to its workflow's entry when one is held (else the next lookup reads
    /// it from the provider), without counting as a use.
    public mutating func recordIfHeld(_ summary: RunSummary) {
        let workflow = Workflow(repository: summary.key.repository, name: summary.workflow)
        entries[workflow]?.history.record(summary)
    }
}
