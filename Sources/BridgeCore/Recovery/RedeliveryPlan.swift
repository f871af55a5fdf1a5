/// What one sweep of a hook's delivery log asks GitHub to send again, and how far back the next
/// sweep must look. Pure: the daemon reads the log and the store, this decides.
///
/// A delivery GitHub logged is missed when its GUID is not in the `deliveries` table: whatever
/// the listener answered (nothing, a 503, a proxy's 502), the bridge never stored it. One that is
/// stored is never asked for again, even after a failed answer: a 2xx means durable, and a 400
/// was recorded as malformed and would be refused again. Only `workflow_run` and `workflow_job`
/// deliveries are asked for (the rest change no card), only while GitHub still keeps them (the
/// `retention` of the API's kind, see `GitHubAPISettings.deliveryRetention`), each
/// GUID once per `retryAfter` and at most `maxRequests` times, oldest first. A GUID whose last
/// request went `retryAfter` unanswered is given up on once (`givenUp`, which the daemon records
/// and says); after that it is left alone.
public struct RedeliveryPlan: Sendable, Equatable {
    /// What the bridge asked of one GUID before (kept across sweeps and restarts).
    public struct Requested: Sendable, Equatable {
        public var requests: Int
        public var lastAt: UnixTime
        /// Given up on by an earlier sweep (and said then).
        public var givenUp: Bool

        public init(requests: Int, lastAt: UnixTime, givenUp: Bool = false) {
            self.requests = requests
            self.lastAt = lastAt
            self.givenUp = givenUp
        }
    }

    /// GitHub.com keeps a hook's deliveries this long: older ones cannot be redelivered.
    public static let githubRetention: UnixTime = 3 * 86_400
    /// An Enterprise Server keeps them this long.
    public static let enterpriseServerRetention: UnixTime = 7 * 86_400
    /// Events whose deliveries shape a card; the rest are never asked for again.
    public static let events: Set<String> = ["workflow_run", "workflow_job"]
    /// How long a redelivery asked for may take to arrive before it is asked for again.
    public static let retryAfter: UnixTime = 600
    /// Times one GUID is asked for before the bridge gives up on it (and says so).
    public static let maxRequests = 3
    /// How far before `examinedThrough` the next sweep still reads: deliveries are logged by the
    /// time GitHub sent them, which is not quite the order they reached the store.
    public static let overlap: UnixTime = 120

    /// The attempts to redeliver now, oldest first: for each missed GUID its newest attempt.
    public var redeliver: [HookDelivery]
    /// Missed GUIDs given up on by this sweep: asked for `maxRequests` times, the last
    /// `retryAfter` ago, and never arrived.
    public var givenUp: [HookDelivery]
    /// The time up to which every delivery is resolved (stored, not ours, or given up): the next
    /// sweep reads back to it (less `overlap`). A missed delivery still waiting holds it back.
    public var examinedThrough: UnixTime

    /// - Parameters:
    ///   - log: every entry read this sweep (any order).
    ///   - stored: the GUIDs of `log` the store has.
    ///   - requested: what was asked of each GUID before.
    ///   - sweptAt: when the sweep started; the log can hold nothing later.
    ///   - retention: how long this GitHub keeps deliveries; nothing older is asked for (GitHub
    ///     would refuse it).
    public init(
        log: [HookDelivery], stored: Set<String>, requested: [String: Requested], sweptAt now: UnixTime,
        retention: UnixTime = githubRetention
    ) {
        let edge = now - retention
        var newestAttempt: [String: HookDelivery] = [:]
        var firstSent: [String: UnixTime] = [:]
        for entry in log where Self.events.contains(entry.event) && entry.deliveredAt > edge {
            if newestAttempt[entry.guid].map({ $0.id < entry.id }) ?? true { newestAttempt[entry.guid] = entry }
            firstSent[entry.guid] = min(firstSent[entry.guid] ?? entry.deliveredAt, entry.deliveredAt)
        }
        var due: [HookDelivery] = []
        var givenUp: [HookDelivery] = []
        var oldestWaiting: UnixTime?
        for (guid, attempt) in newestAttempt where !stored.contains(guid) {
            let asked = requested[guid]
            if asked?.givenUp == true { continue }
            let inFlight = asked.map { now - $0.lastAt < Self.retryAfter } ?? false
            if let asked, !inFlight, asked.requests >= Self.maxRequests {
                givenUp.append(attempt)
                continue
            }
            let sent = firstSent[guid] ?? attempt.deliveredAt
            oldestWaiting = min(oldestWaiting ?? sent, sent)
            if !inFlight { due.append(attempt) }
        }
        let byAge: (HookDelivery, HookDelivery) -> Bool = {
            (firstSent[$0.guid] ?? 0, $0.id) < (firstSent[$1.guid] ?? 0, $1.id)
        }
        redeliver = due.sorted(by: byAge)
        self.givenUp = givenUp.sorted(by: byAge)
        examinedThrough = oldestWaiting ?? now
    }

    /// True when a sweep that has read back to `oldest` (the oldest entry of its last page) can
    /// stop: it reached what an earlier sweep resolved, or what GitHub no longer keeps (`retention`).
    public static func hasReadEnough(
        oldest: UnixTime, examinedThrough: UnixTime?, sweptAt now: UnixTime, retention: UnixTime = githubRetention
    ) -> Bool {
        if oldest <= now - retention { return true }
        guard let examinedThrough else { return false }
        return oldest < examinedThrough - overlap
    }
}
