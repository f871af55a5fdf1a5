import BridgeCore

/// A fake PushWard server as a value: tests (and the `render` command's tests) send it every
/// request the bridge produces, then look at what it stores and at what it refused.
///
/// It applies requests with `PushWardActivityModel`, the same rules the bridge uses to track the
/// server, and refuses — without storing anything — every request `ContractValidator` faults, so
/// a test passes only if the real server would have accepted every request. It also holds the
/// bridge to PushWard's documented limits (`FakeLimits`): five ongoing activities per person,
/// with eviction to `preempted`; fifty activities per account, ended ones included until they
/// are deleted (by `DELETE` or by auto-deletion `ended_ttl` after the end).
public struct InMemoryPushWard: Sendable {
    /// One handled request and the answer it got.
    public struct Entry: Sendable, Equatable {
        public var request: PushWardRequest
        /// When the request was handled (what `duration` is anchored to).
        public var at: UnixTime
        /// The HTTP status answered: 201, 200, 400, 404, 409, 422, or 429 when the quota is spent.
        public var status: Int
        /// Why the request was refused; empty when it was applied.
        public var violations: [ContractViolation]
        /// The problem `code` of a refusal (`activity.state_invalid`, `activity.limit_exceeded`, …);
        /// nil when the request was applied.
        public var code: String?
        /// True when the request created the activity (`X-Resource-Action: created`).
        public var created: Bool

        public init(
            request: PushWardRequest, at: UnixTime, status: Int, violations: [ContractViolation],
            code: String? = nil, created: Bool = false
        ) {
            self.request = request
            self.at = at
            self.status = status
            self.violations = violations
            self.code = code
            self.created = created
        }
    }

    /// What the server holds, by slug.
    public private(set) var activities: [String: StoredActivity] = [:]
    /// The server-side part of each activity, by slug (times, target, scheduled deletion).
    public private(set) var records: [String: FakeActivityRecord] = [:]
    /// Every request handled, in order, refused ones included.
    public private(set) var log: [Entry] = []
    /// Every eviction, oldest first.
    public private(set) var evictions: [FakeEviction] = []
    /// The most activities each person held `ongoing` at once, after evictions (so never above
    /// `limits.ongoingPerPerson`), by person.
    public private(set) var peakOngoing: [String: Int] = [:]
    /// The most activities the account held at once.
    public private(set) var peakActivities = 0
    /// Slugs deleted, by `DELETE` or auto-deletion, oldest first.
    public private(set) var deletions: [(slug: String, at: UnixTime, automatic: Bool)] = []
    /// The Live Activity update quota: unlimited unless a test sets a limit, so a test that does
    /// not care about the quota never meets it.
    public var quota = FakeQuota()
    /// The documented limits unless a test changes them.
    public var limits = FakeLimits.documented
    /// Whose key the requests carry: it decides who a "person" is for the ongoing cap.
    public var keyKind = FakeKeyKind.personal
    private var minted = 0
    /// Content fields the next PATCH carrying a value for them is refused for, once each
    /// (`refuseOnce`).
    private var refusedOnce: Set<String> = []

    /// Refuses the next PATCH that sets `field` in its content with `422 activity.content_invalid`
    /// naming the field, as PushWard refuses a value it will not take; later ones are judged as
    /// usual. For tests of a refusal the bridge must not repeat.
    public mutating func refuseOnce(field: String) {
        refusedOnce.insert(field)
    }

    /// The person a personal key's activities all count against.
    public static let accountPerson = "account"
    /// With an organisation key, the members of the organisation that no target names: an
    /// untargeted activity reaches them (and everyone else), a targeted one does not.
    public static let organisationPerson = "organisation"

    public init() {}

    /// Handles `request` received at `now` and returns the HTTP status:
    /// `201` for a valid POST (an upsert), `200` for a valid PATCH (applied), `404` for a PATCH of
    /// a slug never created (recorded as an `activity.not_found` violation: the bridge must POST
    /// first), `409` for a create beyond `limits.activitiesPerAccount`, `400` for a PATCH with a
    /// bad `state` or `priority` or without `state` on a `preempted` activity, `422` for any other
    /// violation (nothing applied, the violations recorded), `429` when `quota` is spent (checked
    /// first, so nothing is validated or applied; the fake's choice, as PushWard does not say which
    /// check comes first). Each `201` and `200` is charged to `quota`. `upsert` is
    /// `PATCH ?upsert=true`: a missing slug is created (named after it) and answered `201`.
    @discardableResult
    public mutating func handle(_ request: PushWardRequest, at now: UnixTime, upsert: Bool = false) -> Int {
        sweep(at: now)
        if quota.isSpent(at: now) {
            log.append(Entry(request: request, at: now, status: 429, violations: []))
            return 429
        }
        let entry: Entry
        switch request.method {
        case .post: entry = post(request, at: now)
        case .patch: entry = patch(request, at: now, upsert: upsert)
        case .delete:
            let violations = ContractValidator.validate(request, stored: activities[request.slug], at: now)
            entry = Entry(
                request: request, at: now, status: violations.isEmpty ? delete(request.slug, at: now) : 422,
                violations: violations)
        }
        if entry.status == 200 || entry.status == 201 { quota.charge(at: now) }
        log.append(entry)
        peakActivities = max(peakActivities, activities.count)
        return entry.status
    }

    private mutating func post(_ request: PushWardRequest, at now: UnixTime) -> Entry {
        let stored = activities[request.slug]
        let violations = ContractValidator.validate(request, stored: stored, at: now)
        guard violations.isEmpty else {
            return Entry(request: request, at: now, status: 422, violations: violations, code: nil)
        }
        if stored == nil, activities.count >= limits.activitiesPerAccount {
            return Entry(request: request, at: now, status: 409, violations: [], code: "activity.limit_exceeded")
        }
        activities[request.slug] = PushWardActivityModel.create(request.body, existing: stored)
        var record = records[request.slug] ?? mintRecord(at: now)
        record.updatedAt = now
        // Re-POSTing without `target` keeps the stored one (§3).
        if let target = request.body["target"] { record.target = target }
        if let dismissal = request.body["dismissal_ttl"]?.intValue { record.dismissalTTL = dismissal }
        records[request.slug] = record
        return Entry(request: request, at: now, status: 201, violations: [], created: stored == nil)
    }

    private mutating func patch(_ request: PushWardRequest, at now: UnixTime, upsert: Bool) -> Entry {
        var request = request
        // `state` is case-insensitive (`UpdateActivityRequest.state`); the model stores it lowered.
        let state = request.body["state"]
        if let text = state?.stringValue, var members = request.body.objectValue {
            members["state"] = .string(text.lowercased())
            request.body = .object(members)
        }
        func refuse(_ status: Int, _ code: String?, _ field: String, _ rule: String) -> Entry {
            Entry(
                request: request, at: now, status: status,
                violations: [ContractViolation(field: field, rule: rule)], code: code)
        }
        var created = false
        if activities[request.slug] == nil, upsert {
            if activities.count >= limits.activitiesPerAccount {
                return Entry(request: request, at: now, status: 409, violations: [], code: "activity.limit_exceeded")
            }
            created = true
        }
        let stored = activities[request.slug] ?? (created ? StoredActivity(name: request.slug, priority: 0) : nil)
        guard let stored else {
            return refuse(404, "activity.not_found", "slug", "activity.not_found")
        }
        // A state or priority of the wrong type is a schema error (422, below); a string or an
        // integer the server does not take is the documented 400.
        if let text = state?.stringValue, !["ongoing", "ended"].contains(text.lowercased()) {
            return refuse(400, "activity.state_invalid", "state", "must be ongoing or ended")
        }
        if let priority = request.body["priority"]?.intValue, !(0...10).contains(priority) {
            return refuse(400, "activity.priority_invalid", "priority", "must be 0–10")
        }
        // "unless the activity is PREEMPTED, in which case the caller must set ONGOING or ENDED
        // explicitly" (updateActivity): the documented 400 for a state the server will not take.
        if stored.state == "preempted", state == nil {
            return refuse(400, "activity.state_invalid", "state", "required: the activity is preempted")
        }
        let violations = ContractValidator.validate(request, stored: stored, at: now)
        guard violations.isEmpty else {
            return Entry(
                request: request, at: now, status: 422, violations: violations, code: "activity.content_invalid")
        }
        if let content = request.body["content"]?.objectValue,
            let field = refusedOnce.sorted().first(where: { content[$0].map { !$0.isNull } ?? false })
        {
            refusedOnce.remove(field)
            return refuse(422, "activity.content_invalid", "content." + field, "refused once by the test")
        }
        let applied = PushWardActivityModel.applyPatch(request.body, to: stored, at: now)
        activities[request.slug] = applied
        var record = records[request.slug] ?? mintRecord(at: now)
        record.updatedAt = now
        if let target = request.body["target"] { record.target = target.isNull ? nil : target }
        if let dismissal = request.body["dismissal_ttl"] { record.dismissalTTL = dismissal.intValue }
        if applied.state == "ended", stored.state != "ended" || created {
            record.ongoingSince = nil
            if record.endedAt == nil { record.endedAt = now }
            record.deleteAt = limits.deletion(endedAt: now, endedTTL: applied.endedTTL)
        }
        let started = applied.state == "ongoing" && stored.state != "ongoing"
        if started {
            record.ongoingSince = now
            record.deleteAt = nil
        }
        records[request.slug] = record
        if started { evict(for: request.slug, at: now) }
        return Entry(request: request, at: now, status: created ? 201 : 200, violations: [], created: created)
    }

    /// `DELETE /activities/{slug}` at `now`: `204` when it existed (an ongoing one is dismissed
    /// from the phones at once), `404 activity.not_found` otherwise. Costs no update.
    @discardableResult
    public mutating func delete(_ slug: String, at now: UnixTime) -> Int {
        sweep(at: now)
        guard activities[slug] != nil else { return 404 }
        remove(slug)
        deletions.append((slug, now, false))
        return 204
    }

    /// The activities in `state` (nil: all), sorted by slug, as `GET /activities?state=` lists
    /// them at `now` (after auto-deletions due by then). Reading costs nothing.
    public mutating func list(state: String?, at now: UnixTime) -> [String] {
        sweep(at: now)
        return activities.filter { state == nil || $0.value.state == state }.keys.sorted()
    }

    /// The people an activity reaches, for the ongoing cap. With a personal key everything
    /// reaches the account's one person. With an organisation key, an activity whose target names
    /// `members` reaches those users; one without (untargeted, or targeted by groups or tags,
    /// which the fake cannot resolve) reaches everyone: each member any target names, and
    /// `organisationPerson` for the rest. So an untargeted organisation activity counts against
    /// every person's cap, which is what each of their phones shows.
    public func persons(of slug: String) -> [String] {
        guard keyKind == .organisation else { return [Self.accountPerson] }
        if let members = records[slug]?.members { return members.sorted() }
        let named = Set(records.values.compactMap(\.members).joined())
        return [Self.organisationPerson] + named.sorted()
    }

    /// The slugs `person` holds ongoing.
    public func ongoing(of person: String) -> [String] {
        activities.filter { $0.value.state == "ongoing" && persons(of: $0.key).contains(person) }.keys.sorted()
    }

    /// After `slug` went ongoing: while any person it reaches holds more than the cap, the
    /// lowest-priority, then oldest (the earliest to have gone ongoing), ongoing activity of that
    /// person becomes `preempted`. The newcomer is a candidate too: sent with a lower priority
    /// than the five already showing, it is the one preempted.
    private mutating func evict(for slug: String, at now: UnixTime) {
        for person in persons(of: slug) {
            var held = ongoing(of: person)
            while held.count > limits.ongoingPerPerson {
                let victim = held.min { left, right in
                    let a = (activities[left]?.priority ?? 0, records[left]?.ongoingSince ?? 0)
                    let b = (activities[right]?.priority ?? 0, records[right]?.ongoingSince ?? 0)
                    return a != b ? a < b : left < right
                }
                guard let victim else { break }
                activities[victim]?.state = "preempted"
                records[victim]?.ongoingSince = nil
                evictions.append(FakeEviction(slug: victim, at: now, by: slug, person: person))
                held = ongoing(of: person)
            }
        }
        for person in Set(activities.keys.flatMap(persons(of:))) {
            peakOngoing[person] = max(peakOngoing[person] ?? 0, ongoing(of: person).count)
        }
    }

    /// Auto-deletes every activity whose `delete_at` has come.
    private mutating func sweep(at now: UnixTime) {
        let due = records.filter { $0.value.deleteAt.map { $0 <= now } ?? false }
        for (slug, record) in due.sorted(by: { ($0.value.deleteAt ?? 0, $0.key) < ($1.value.deleteAt ?? 0, $1.key) }) {
            remove(slug)
            deletions.append((slug, record.deleteAt ?? now, true))
        }
    }

    /// Seconds until the next scheduled auto-deletion frees a place (rounded up, at least 1), or
    /// 60 when none is scheduled: the `Retry-After` of a `409 activity.limit_exceeded`.
    public func secondsUntilRoom(at now: UnixTime) -> Int {
        guard let next = records.values.compactMap(\.deleteAt).min() else { return 60 }
        return max(1, Int((next - now).rounded(.up)))
    }

    private mutating func mintRecord(at now: UnixTime) -> FakeActivityRecord {
        minted += 1
        let tail = String(minted, radix: 16)
        let id = "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - tail.count)) + tail
        return FakeActivityRecord(id: id, at: now)
    }

    /// The documented `Activity` answer (`GET /activities/{slug}`, and the body of a 2xx POST or
    /// PATCH) for `slug`, or nil when there is no such activity.
    public func document(_ slug: String) -> JSONValue? {
        guard let activity = activities[slug], let record = records[slug] else { return nil }
        var members: [String: JSONValue] = [
            "kind": "owned", "id": .string(record.id), "slug": .string(slug), "name": .string(activity.name),
            "state": .string(activity.state), "priority": .number(Double(activity.priority)),
            "content": .object(activity.content), "created_at": .string(FakeQuota.rfc3339(record.createdAt)),
            "updated_at": .string(FakeQuota.rfc3339(record.updatedAt)),
        ]
        if let ttl = activity.endedTTL { members["ended_ttl"] = .number(Double(ttl)) }
        if let ttl = activity.staleTTL { members["stale_ttl"] = .number(Double(ttl)) }
        if let ttl = record.dismissalTTL { members["dismissal_ttl"] = .number(Double(ttl)) }
        if let end = record.endedAt { members["ended_at"] = .string(FakeQuota.rfc3339(end)) }
        if let delete = record.deleteAt { members["delete_at"] = .string(FakeQuota.rfc3339(delete)) }
        return .object(members)
    }

    /// The `GET /auth/me` body at `now`: what `quota` has counted, and how many activities exist.
    /// Reading it costs nothing, as on PushWard.
    public mutating func usageDocument(at now: UnixTime) -> JSONValue {
        sweep(at: now)
        return quota.usageDocument(activityCount: activities.count, at: now)
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
        evictions.removeAll()
        deletions.removeAll()
        return counts
    }

    /// Puts back a log saved earlier: what another client of the account did is not the bridge's.
    mutating func replaceLog(_ saved: [Entry]) {
        log = saved
    }

    /// Deletes an activity, as a user can in the app: the next PATCH of it gets 404.
    public mutating func remove(_ slug: String) {
        activities[slug] = nil
        records[slug] = nil
    }
}
