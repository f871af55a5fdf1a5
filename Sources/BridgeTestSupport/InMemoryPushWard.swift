import BridgeCore

/// A fake PushWard server as a value: tests (and the `render` command's tests) send it every
/// request the bridge produces, then look at what it stores and at what it refused.
///
/// It applies requests with `PushWardActivityModel`, the same rules the bridge uses to track the
/// server, and refuses — without storing anything — every request `ContractValidator` faults, so
/// a test passes only if the real server would have accepted every request.
public struct InMemoryPushWard: Sendable {
    /// One handled request and the answer it got.
    public struct Entry: Sendable, Equatable {
        public var request: PushWardRequest
        /// When the request was handled (what `duration` is anchored to).
        public var at: UnixTime
        /// The HTTP status answered: 201, 200, 404, 422, or 429 when the quota is spent.
        public var status: Int
        /// Why the request was refused; empty when it was applied.
        public var violations: [ContractViolation]
    }

    /// What the server holds, by slug.
    public private(set) var activities: [String: StoredActivity] = [:]
    /// Every request handled, in order, refused ones included.
    public private(set) var log: [Entry] = []
    /// The Live Activity update quota: unlimited unless a test sets a limit, so a test that does
    /// not care about the quota never meets it.
    public var quota = FakeQuota()

    public init() {}

    /// Handles `request` received at `now` and returns the HTTP status:
    /// `201` for a valid POST (an upsert), `200` for a valid PATCH (applied), `404` for a PATCH of
    /// a slug never created (recorded as an `activity.not_found` violation: the bridge must POST
    /// first), `422` for any other violation (nothing applied, the violations recorded), `429` when
    /// `quota` is spent (checked first, so nothing is validated or applied; the fake's choice, as
    /// PushWard does not say which check comes first). Each `201` and `200` is charged to `quota`.
    @discardableResult
    public mutating func handle(_ request: PushWardRequest, at now: UnixTime) -> Int {
        if quota.isSpent(at: now) {
            log.append(Entry(request: request, at: now, status: 429, violations: []))
            return 429
        }
        let stored = activities[request.slug]
        let violations = ContractValidator.validate(request, stored: stored, at: now)
        let status: Int
        switch request.method {
        case .delete where stored == nil:
            status = 404
        case .delete:
            activities[request.slug] = nil
            status = 204
        case .post where violations.isEmpty:
            activities[request.slug] = PushWardActivityModel.create(request.body, existing: stored)
            status = 201
        case .patch where stored == nil:
            status = 404
        case .patch where violations.isEmpty:
            // `stored` is non-nil here: the case above took the nil one.
            if let stored {
                activities[request.slug] = PushWardActivityModel.applyPatch(request.body, to: stored, at: now)
            }
            status = 200
        default:
            status = 422
        }
        if status == 200 || status == 201 { quota.charge(at: now) }
        log.append(Entry(request: request, at: now, status: status, violations: violations))
        return status
    }

    /// The `GET /auth/me` body at `now`: what `quota` has counted, and how many activities exist.
    /// Reading it costs nothing, as on PushWard.
    public mutating func usageDocument(at now: UnixTime) -> JSONValue {
        quota.usageDocument(activityCount: activities.count, at: now)
    }

    /// Every violation of every refused request, in the order they were handled. A test that
    /// drives the bridge through this fake should end with this empty.
    public var violations: [ContractViolation] {
        log.flatMap(\.violations)
    }

    /// Empties `log` (the activities and the quota stay): for a long run against the fake, whose
    /// log would otherwise hold every request ever made. Returns how many entries it held and how
    /// many violations they carried.
    @discardableResult
    public mutating func clearLog() -> (entries: Int, violations: Int) {
        let counts = (log.count, violations.count)
        log.removeAll()
        return counts
    }

    /// Deletes an activity, as a user can in the app: the next PATCH of it gets 404.
    public mutating func remove(_ slug: String) {
        activities[slug] = nil
    }
}
