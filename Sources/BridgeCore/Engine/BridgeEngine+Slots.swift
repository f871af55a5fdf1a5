extension BridgeEngine {
    /// PushWard shows a person at most five ongoing cards and evicts the lowest-priority, then
    /// oldest, one when a sixth goes ongoing. The bridge plans which runs hold them
    /// (`SlotPlanner`), holds back every other run's card (its run is counted on the summary card
    /// instead), sends `priority` so that an eviction still agrees with its plan, and reads
    /// `preempted` back so it never sends a card PushWard ended as if it were showing.

    /// The person a card belongs to ("" for the account): the routed person its runs are for.
    func slotPerson(ofSlug slug: String) -> String {
        if let person = slots.personOfSlug[slug] { return person }
        guard let owner = cardBook[slug]?.owner, let state = runBook[owner] else { return "" }
        return route(for: state).person ?? ""
    }

    /// Something happened to the card on `slug` (a delivery for its run, a new owner, an answer):
    /// its person is planned again before the next requests are chosen.
    mutating func noteSlotChange(_ slug: String) {
        let person = slotPerson(ofSlug: slug)
        if slots.personOfSlug[slug] == nil, cardBook[slug]?.owner != nil {
            slots.index(slug, person: person)
        }
        slots.markDirty(person: person)
    }

    /// Whether `GET /activities?state=preempted` is wanted now (at start, and after an answer that
    /// suggests an eviction). The caller asks it, then passes the answer to `observePreempted`.
    public var wantsPreemptedCheck: Bool { slots.preemptedCheckWanted }

    /// Whether to ask for the preempted list at `now`: wanted, not asked in the last few seconds,
    /// and with room for a read in the pacer (the one pacer covers reads too). Saying yes counts
    /// as asking and takes that room.
    public mutating func takePreemptedCheck(at now: UnixTime) -> Bool {
        guard slots.preemptedCheckWanted else { return false }
        // With no card the bridge takes for showing, there is nothing the list could correct.
        guard cardBook.sessions.values.contains(where: { $0.phase != .ended && $0.acknowledged?.state == "ongoing" })
        else {
            slots.notePreemptedCheck(askedAt: nil)
            return false
        }
        if let asked = slots.preemptedCheckAskedAt, now < asked + SlotBook.preemptedCheckSpacing { return false }
        guard admitPaced(.reading, at: now) else { return false }
        slots.notePreemptedCheck(askedAt: now)
        return true
    }

    /// The runs of `person` holding one of the ongoing cards, and those on the summary card.
    public func slotHolders(person: String = "") -> Set<RunKey> { slots.holders[person] ?? [] }
    public func summaryRuns(person: String = "") -> [RunKey] { slots.summary[person] ?? [] }

    /// Plans every person something happened to since the last plan.
    mutating func planSlots(at now: UnixTime) {
        if slots.takeStale() { rebuildSlotIndex() }
        for person in slots.takeDirtyPeople() { planSlots(person: person, at: now) }
    }

    /// After a restart the index of cards by person is built once from the sessions put back.
    private mutating func rebuildSlotIndex() {
        for (slug, session) in cardBook.sessions where session.owner != nil && slots.personOfSlug[slug] == nil {
            let person = SummaryCard.isSummary(slug) ? personOfSummary(slug) : slotPerson(ofSlug: slug)
            slots.index(slug, person: person)
            slots.markDirty(person: person)
        }
    }

    /// The person a summary card put back from storage is for: the one whose slug it has.
    private func personOfSummary(_ slug: String) -> String {
        for person in Set(slots.personOfSlug.values) where SummaryCard.slug(person: person) == slug { return person }
        for state in runBook.states.values {
            let person = route(for: state).person ?? ""
            if SummaryCard.slug(person: person) == slug { return person }
        }
        return ""
    }

    private mutating func planSlots(person: String, at now: UnixTime) {
        var candidates: [SlotPlanner.Candidate] = []
        var ranks: [RunKey: SlotRank] = [:]
        var preempted: Set<RunKey> = []
        for slug in (slots.slugsOfPerson[person] ?? []).sorted() where !SummaryCard.isSummary(slug) {
            guard let session = cardBook[slug], let owner = session.owner, session.phase != .ended,
                let state = runBook[owner]
            else { continue }
            let wasPreempted = session.acknowledged?.state == "preempted"
            // A preempted card of a finished run only ends (`slotGate`): it wants no slot.
            if wasPreempted && state.completion != nil { continue }
            let holds = session.phase != .needsCreate && !wasPreempted
            let rank = SlotRank.of(state, endFrameShown: session.phase == .finalShown)
            ranks[owner] = rank
            if wasPreempted { preempted.insert(owner) }
            candidates.append(
                SlotPlanner.Candidate(
                    run: owner, rank: rank, startedAt: state.attemptStartedAt, holdsCard: holds,
                    // A card restarted after a preemption keeps its slot until its run ends:
                    // PushWard preempts a card at most once per run.
                    pinned: holds
                        && (session.phase == .finalShown || state.completion != nil
                            || (state.placement?.preemptions ?? 0) >= 1),
                    preempted: wasPreempted, barred: wasPreempted && (state.placement?.preemptions ?? 0) >= 2,
                    finished: session.sentNothingYet && state.completion != nil))
        }
        let plan = SlotPlanner.plan(candidates, slots: configuration.settings.slotsPerPerson)
        let holders = Set(plan.cards)
        let before = slots.setHolders(holders, of: person)
        for key in holders.symmetricDifference(before) {
            guard let slug = runBook.slugs[key] else { continue }
            cardBook.markDirty(slug)
            if before.contains(key), let session = cardBook[slug], session.acknowledged?.state == "ongoing",
                session.phase != .ended
            {
                slots.markDisplaced(slug)
            }
        }
        for key in plan.cards {
            let restarting = preempted.contains(key)
            place(key, .card, rank: ranks[key] ?? .other, at: now, restarting: restarting)
        }
        for key in plan.summary {
            place(key, preempted.contains(key) ? .preempted : .summary, rank: ranks[key] ?? .other, at: now)
        }
        for key in plan.dropped { drop(key, rank: ranks[key] ?? .other, at: now) }
        updateSummary(person: person, runs: plan.summary, at: now)
        // A card held back for room is decided again whenever its person is planned.
        for slug in slots.waitingForRoom where slots.personOfSlug[slug] == person { cardBook.markDirty(slug) }
    }

    /// Records where the run stands, when that changed.
    private mutating func place(
        _ key: RunKey, _ place: CardPlacement.Place, rank: SlotRank, at now: UnixTime, restarting: Bool = false
    ) {
        guard let state = runBook[key] else { return }
        var placement = state.placement ?? CardPlacement(place: place, since: now, rank: rank)
        if placement.place != place {
            placement.place = place
            placement.since = now
        }
        placement.rank = rank
        switch place {
        case .card:
            if placement.cardAt == nil { placement.cardAt = now }
            if restarting, placement.restartedAt == nil { placement.restartedAt = now }
        case .summary, .preempted:
            if placement.summaryAt == nil { placement.summaryAt = now }
        case .dropped:
            break
        }
        runBook.place(key, placement, changes: &changes)
    }

    /// A run that finished while every slot was taken gets no card: its session ends unsent and
    /// the card passes to the next run of the slug, if any.
    private mutating func drop(_ key: RunKey, rank: SlotRank, at now: UnixTime) {
        place(key, .dropped, rank: rank, at: now)
        guard let slug = runBook.slugs[key], cardBook[slug]?.owner == key else { return }
        cardBook.update(slug, redecide: false, changes: &changes) { $0.phase = .ended }
        release(key, slug: slug)
        reassignActivities(slug)
    }

    /// Keeps the person's summary card in step with the runs it counts: created (or taken up
    /// again) when runs overflow, its content moved when the list changes, ended when it empties.
    private mutating func updateSummary(person: String, runs listed: [RunKey], at now: UnixTime) {
        let slug = SummaryCard.slug(person: person)
        if slots.setSummary(listed, of: person, at: now) {
            if cardBook[slug] != nil {
                cardBook.markDirty(slug)
                changes.slugs.insert(slug)
            }
        }
        guard !listed.isEmpty else { return }
        var target: ActivityTarget?
        if !person.isEmpty {
            for key in listed {
                if let state = runBook[key], let routed = route(for: state).target {
                    target = routed
                    break
                }
            }
        }
        var session = cardBook[slug] ?? ActivitySession(identity: SummaryCard.identity(person: person, target: nil))
        guard session.owner == nil || session.phase == .ended else { return }
        session.identity = SummaryCard.identity(person: person, target: dispatch.targetsRefused ? nil : target)
        session.assign(to: SummaryCard.owner)
        // The summary moves when runs come and go, not with their steps: every change is minor,
        // and it must go out at every level (coalesced), not wait for a heartbeat.
        session.fidelity = .full
        cardBook.put(session, on: slug, changes: &changes)
        slots.index(slug, person: person)
        cardBook.markDirty(slug)
    }

    /// What the summary card on `slug` shows; nil once it ended with nothing to count.
    func summaryDesired(slug: String) -> DesiredActivity? {
        guard let session = cardBook[slug], session.owner == SummaryCard.owner else { return nil }
        let person = slots.personOfSlug[slug] ?? ""
        let listed = slots.summary[person] ?? []
        if listed.isEmpty && session.phase == .ended { return nil }
        let entries = listed.compactMap { key -> SummaryCard.Entry? in
            guard let state = runBook[key] else { return nil }
            let rank = state.placement?.rank ?? SlotRank.of(state)
            return SummaryCard.Entry(state: state, rank: rank, preempted: state.placement?.place == .preempted)
        }
        return SummaryCard.desired(
            entries: entries, settings: configuration.settings, changedAt: slots.summaryChangedAt[person])
    }

    /// What the slot plan says of the card on `slug` before the reconciler is asked: nil to let it
    /// decide, or the decision itself (held back: no slot; or the end of a preempted card).
    func slotGate(slug: String, at now: UnixTime) -> ReconcileDecision? {
        guard let session = cardBook[slug], let owner = session.owner, owner != SummaryCard.owner,
            session.phase != .ended, session.phase != .finalShown, let state = runBook[owner]
        else { return nil }
        let person = slots.personOfSlug[slug] ?? slotPerson(ofSlug: slug)
        let holds = slots.holders[person]?.contains(owner) ?? false
        if session.acknowledged?.state == "preempted" {
            // PushWard already ended it on the phones; a finished run's card is ended on the server
            // too (a PATCH to a preempted activity must say its state), with no restart.
            guard state.completion != nil else { return holds ? nil : .idle }
            if let retryAt = session.retryAt, now < retryAt { return .wait(until: retryAt) }
            // Refused once, never sent again (as every refused body).
            guard session.rejectedBody != ["state": "ended"] else { return .idle }
            return .send(
                PlannedRequest(
                    request: PushWardRequest(method: .patch, slug: slug, body: ["state": "ended"]), kind: .end,
                    run: owner))
        }
        return holds ? nil : .idle
    }

    /// The decision with the card's `priority` where PushWard must learn it (the create, and the
    /// first PATCH after its class changed), and held back when going ongoing would make PushWard
    /// evict a card the plan keeps.
    mutating func slotAdjusted(_ decision: ReconcileDecision, slug: String) -> ReconcileDecision {
        // A claim to go ongoing lasts from the decision to its answer; a card decided again has
        // no request out (the dispatcher decides no card in flight), so an old claim is void.
        slots.claimOngoing(slug, false)
        guard case .send(var planned) = decision, var body = planned.request.body.objectValue,
            planned.request.resource == .activities, let session = cardBook[slug]
        else { return decision }
        let person = slots.personOfSlug[slug] ?? slotPerson(ofSlug: slug)
        let wanted = wantedPriority(slug: slug)
        if planned.kind == .create || body["priority"] != nil {
            body["priority"] = .number(Double(wanted))
        } else if planned.kind != .end, planned.kind != .correction,
            session.priority ?? configuration.settings.priority != wanted
        {
            body["priority"] = .number(Double(wanted))
        }
        let suspect = slots.displaced.contains(slug)
        if suspect, planned.request.method == .patch, body["state"] == nil, session.phase == .live {
            body["state"] = "ongoing"
        }
        let goesOngoing = body["state"] == "ongoing" && (session.acknowledged?.state != "ongoing" || suspect)
        if goesOngoing {
            guard hasRoom(person: person, for: slug, priority: wanted) else {
                slots.waitForRoom(slug, true)
                return .idle
            }
            slots.claimOngoing(slug, true)
        }
        slots.waitForRoom(slug, false)
        planned.request.body = .object(body)
        return .send(planned)
    }

    /// The priority the card on `slug` should have: its owner's class (`SlotRank.priority`), or
    /// the summary's.
    func wantedPriority(slug: String) -> Int {
        if SummaryCard.isSummary(slug) { return SlotRank.summaryPriority(base: configuration.settings.priority) }
        guard let session = cardBook[slug], let owner = session.owner, let state = runBook[owner] else {
            return configuration.settings.priority
        }
        return SlotRank.of(state, endFrameShown: session.phase == .finalShown).priority(
            base: configuration.settings.priority)
    }

    /// Whether one more of the person's cards may go ongoing: fewer than their slots are (as far
    /// as answers and requests out tell), or one that is has lost its slot and ranks below, so it
    /// is the one PushWard evicts (lowest priority, then oldest).
    func hasRoom(person: String, for slug: String, priority: Int) -> Bool {
        var ongoing = 0
        var yielding = false
        for other in slots.slugsOfPerson[person] ?? [] where other != slug {
            guard let session = cardBook[other], session.phase != .ended else { continue }
            let showing = session.acknowledged?.state == "ongoing" || slots.ongoingClaims.contains(other)
            guard showing else { continue }
            ongoing += 1
            if let owner = session.owner, owner != SummaryCard.owner, session.phase != .finalShown,
                !(slots.holders[person]?.contains(owner) ?? false),
                (session.priority ?? configuration.settings.priority) <= priority
            {
                yielding = true
            }
        }
        return ongoing < configuration.settings.slotsPerPerson || yielding
    }

    /// Notes what an answer to a request for `slug` says of the slots: the claim to go ongoing is
    /// settled; a card gone ongoing while one of the person's cards lost its slot means PushWard
    /// evicted that one, and a PATCH answered `preempted` (or refused for want of a `state`) means
    /// it evicted this one. Either way the free `GET /activities?state=preempted` says which.
    mutating func noteSlotAnswer(_ answer: PushWardAnswer, for planned: PlannedRequest, at now: UnixTime) {
        let slug = planned.request.slug
        slots.claimOngoing(slug, false)
        noteSlotChange(slug)
        guard planned.request.resource == .activities else { return }
        switch answer {
        case .success(_, let state):
            if planned.request.body["state"] != nil { slots.settleDisplaced(slug) }
            if state == "preempted" {
                markPreempted(slug, at: now)
            } else if planned.request.body["state"] == "ongoing" {
                let person = slotPerson(ofSlug: slug)
                let evicting = (slots.slugsOfPerson[person] ?? []).contains { other in
                    guard other != slug, let session = cardBook[other], let owner = session.owner,
                        owner != SummaryCard.owner, session.acknowledged?.state == "ongoing",
                        session.phase != .ended
                    else { return false }
                    return !(slots.holders[person]?.contains(owner) ?? false)
                }
                if evicting { slots.wantPreemptedCheck() }
            }
        case .problem(let problem)
        where planned.request.method == .patch && planned.request.body["state"] == nil
            && (problem.code == "activity.state_invalid" || problem.detail?.lowercased().contains("preempted") == true):
            slots.wantPreemptedCheck()
        default:
            break
        }
    }

    /// PushWard's list of the key's preempted activities (`GET /activities?state=preempted`): each
    /// card of the bridge's in it that the bridge still took for showing is marked preempted; its
    /// run goes to the summary card. Slugs the bridge does not hold are someone else's and ignored.
    public mutating func observePreempted(_ slugs: Set<String>, at now: UnixTime) {
        // Answered: the next eviction is asked about at once; only unanswered asks are spaced.
        slots.preemptedCheckAnswered()
        for slug in slugs.sorted() { markPreempted(slug, at: now) }
    }

    private mutating func markPreempted(_ slug: String, at now: UnixTime) {
        guard var session = cardBook[slug], session.phase != .ended, session.phase != .needsCreate,
            var acknowledged = session.acknowledged, acknowledged.state != "preempted"
        else { return }
        acknowledged.state = "preempted"
        session.acknowledged = acknowledged
        cardBook.update(slug, changes: &changes) { $0.acknowledged = acknowledged }
        noteSlotChange(slug)
        guard let owner = session.owner, owner != SummaryCard.owner, let state = runBook[owner] else { return }
        var placement =
            state.placement ?? CardPlacement(place: .preempted, since: now, rank: SlotRank.of(state))
        placement.place = .preempted
        placement.since = now
        placement.preemptedAt = now
        placement.preemptions = (placement.preemptions ?? 0) + 1
        if placement.summaryAt == nil { placement.summaryAt = now }
        runBook.place(owner, placement, changes: &changes)
    }
}
