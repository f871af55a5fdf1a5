/// The bridge's side of one activity (one slug): which run draws it, how far that run's
/// lifecycle got, and what PushWard has acknowledged.
///
/// `acknowledged` is promoted only after a 2xx, so after any failure or restart the next request
/// is computed against what the server really holds.
public struct ActivitySession: Sendable, Equatable, Codable {
    public enum Phase: String, Sendable, Equatable, Codable {
        /// The owner changed: `POST /activities` first (upsert; a new activity starts ended).
        case needsCreate
        /// Created: the first PATCH sets every field the bridge uses and nulls the rest.
        case needsFirstFrame
        /// Showing the run: diffs as its state moves.
        case live
        /// The end frame is shown; `state: ended` follows after the display time.
        case finalShown
        /// Ended on the server; the card is free for another run.
        case ended
    }

    public var identity: ActivityIdentity
    /// The run drawing the card; nil before any.
    public var owner: RunKey?
    public var phase: Phase
    /// What PushWard holds, as far as the bridge knows from acknowledged requests; the content is
    /// unknown (nil) between the POST and the first frame, since a re-POST keeps old content.
    public var acknowledged: StoredActivity?
    /// The last acknowledged PATCH: the throttle and the heartbeat count from here.
    public var lastPatchAt: UnixTime?
    /// When the end frame was acknowledged.
    public var finalShownAt: UnixTime?
    /// Not before this: a backoff after failures; nil when the card may send now.
    public var retryAt: UnixTime?
    /// Consecutive failed requests (no answer, 5xx): the backoff's exponent.
    public var failures: Int = 0
    /// A body PushWard refused (422 and other 4xx): never sent again; the next different state
    /// goes out as a full frame.
    public var rejectedBody: JSONValue?
    /// After a refusal the acknowledged content is in doubt: the next frame sets every field.
    public var needsFullFrame: Bool = false
    /// Content fields PushWard refused (422) in this run's frames, with the problem it gave: the
    /// next frames go without them (`RefusedField`), so the card keeps moving to its end.
    /// `runs show` and `explain` print them. Cleared when another run takes the card.
    public var droppedFields: [String: String]?
    /// The last problem PushWard reported for this card, for maintainers (`runs show`); kept after
    /// later successes so it can still be read.
    public var lastProblem: String?
    public var lastProblemAt: UnixTime?
    /// When the difference between what the card shows and what the run wants, still unsent,
    /// was first seen: coalescing and settling count from here. Nil when nothing is held.
    /// (Optional, like the fields below, so sessions stored before they existed still decode.)
    public var pendingSince: UnixTime?
    /// The level the owner run is drawn at, chosen when it took the card; nil: the settings' level.
    public var fidelity: Fidelity?
    /// When each request acknowledged in the last hour went out: the hourly cap counts these.
    public var recentUpdates: [UnixTime]?
    /// Requests PushWard acknowledged on this card since the bridge first drew it.
    public var totalUpdates: Int?
    /// The step the acknowledged frame showed, for a template whose content does not say (generic).
    public var acknowledgedStep: Int?
    /// The `priority` PushWard holds for the activity, as last acknowledged in a body that set it
    /// (a create, or the PATCH after the owner's rank class changed); nil before any.
    public var priority: Int?

    /// When PushWard acknowledged `state: ended`: the card shows `dismissal_ttl` from here, and the
    /// activity is kept (it still counts against the account's 50) for the next run to reuse.
    public var endedAt: UnixTime?
    /// When a create met the account's cap (`409 activity.limit_exceeded`) and this ended activity
    /// was chosen to make room, or the account neared its cap (`AccountRoom`): it is deleted now.
    public var deletionRequestedAt: UnixTime?
    /// When PushWard said the activity is gone (`DELETE` answered 2xx or 404): nothing is left to
    /// send for it, and the next run on the slug creates it again.
    public var deletedAt: UnixTime?
    /// The create met the account's cap: it is tried again as soon as a deletion the bridge asked
    /// for is answered, not on a timer.
    public var waitsForRoom: Bool?
    /// The slug, name and target the bridge created the activity with, while it knows the
    /// activity to exist on PushWard: set when a create is acknowledged, cleared when a deletion
    /// is, or a PATCH meets `404`. A run taking the card reuses the activity when its identity is
    /// the same (`assign`), and pays no create.
    public var serverIdentity: ActivityIdentity?
    /// This lifecycle started on an activity that already existed (no create): its first frame
    /// carries what a create would have set (`priority`, the TTLs). Cleared once that frame is
    /// acknowledged.
    public var reused: Bool?

    /// The step PushWard shows: the content's `current_step`, else what the bridge noted it sent.
    public var shownStep: Int? { acknowledged?.content["current_step"]?.intValue ?? acknowledgedStep }

    public init(identity: ActivityIdentity) {
        self.identity = identity
        self.owner = nil
        self.phase = .ended
        self.acknowledged = nil
        self.lastPatchAt = nil
        self.finalShownAt = nil
        self.retryAt = nil
    }

    /// Hands the card to `run`: its lifecycle starts over, with a POST unless PushWard holds the
    /// activity already as the bridge created it (`serverIdentity`), with the same name and
    /// target: then with the first frame, which sets everything a create would have.
    public mutating func assign(to run: RunKey) {
        owner = run
        let exists = serverIdentity == identity
        phase = exists ? .needsFirstFrame : .needsCreate
        reused = exists ? true : nil
        finalShownAt = nil
        rejectedBody = nil
        needsFullFrame = false
        droppedFields = nil
        pendingSince = nil
        fidelity = nil
        // A new lifecycle: the activity is created (again) for this run, whatever became of it.
        endedAt = nil
        deletionRequestedAt = nil
        deletedAt = nil
    }

    /// Whether nothing has been sent for the owner's lifecycle yet: waiting for its create, or for
    /// the first frame of a reused activity.
    public var sentNothingYet: Bool { phase == .needsCreate || (phase == .needsFirstFrame && reused == true) }

    /// Requests acknowledged in the hour before `now`, oldest first.
    public func updates(inHourBefore now: UnixTime) -> [UnixTime] {
        (recentUpdates ?? []).filter { $0 > now - 3600 }
    }
}
