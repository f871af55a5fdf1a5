import BridgeCore

/// One run's recorded deliveries played again through the core, at the times they arrived, with
/// a PushWard that acknowledges everything: what the card sent under given settings, and what the
/// reconciler decided at each moment, so `explain` can tell why a change did not go out.
///
/// Only the run's own deliveries are played: a card shared with other runs, the history an
/// earlier run left, or the requests of the last hour before this run are not part of it. That is
/// what makes it pure (nothing but the run's record is read); the held changes it finds are the
/// run's own.
struct CardReplay {
    /// A request the replay sent for the run, and what the card showed once it was acknowledged.
    struct Send {
        var at: UnixTime
        var kind: PlannedRequest.Kind
        /// The patch's `content` (empty for a POST or a heartbeat).
        var patch: [String: JSONValue]
        /// The card's content after the request: what a phone showed from `at` on.
        var shown: [String: JSONValue]
    }

    let run: RunKey
    private(set) var engine: BridgeEngine
    private(set) var clock: UnixTime = 0
    private(set) var sends: [Send] = []
    /// The reconciler's last word on the run's card at each moment the replay stopped: after the
    /// sends of that moment, so a send is never the last word.
    private(set) var decisions: [UnixTime: ReconcileDecision] = [:]

    init(run: RunKey, settings: ActivitySettings) {
        self.run = run
        engine = BridgeEngine(settings: settings)
    }

    /// The slug the run draws on, once it was seen.
    var slug: String? { engine.slugs[run] }

    /// What the run's card shows at the clock: nil before its first frame or when another run holds it.
    var shown: [String: JSONValue]? {
        guard let slug, let session = engine.sessions[slug], session.owner == run else { return nil }
        return session.acknowledged?.content
    }

    /// Applies a delivery received at `time`, after every timer due before it.
    mutating func feed(_ event: WebhookEvent, at time: UnixTime) {
        run(until: time)
        _ = engine.receive(event, at: time)
        flush()
    }

    /// Lets time run to `limit`: each timer due on the way fires and what it causes is sent, then
    /// the card is decided at `limit` itself.
    mutating func run(until limit: UnixTime) {
        while let next = engine.nextWakeup(after: clock), next <= limit {
            clock = next
            flush()
        }
        clock = max(clock, limit)
        flush()
    }

    /// Sends everything due at the clock, each acknowledged at once, as `render` does; the cap on
    /// rounds turns a reconciler that would not converge into a short replay instead of a hang.
    private mutating func flush() {
        engine.advance(to: clock)
        var rounds = 0
        var progressing = true
        while progressing, rounds < 64 {
            progressing = false
            rounds += 1
            for slug in engine.sessions.keys.sorted() {
                let decision = engine.decide(slug: slug, at: clock)
                guard case .send(let planned) = decision else {
                    if slug == self.slug { decisions[clock] = decision }
                    continue
                }
                engine.acknowledge(planned, at: clock)
                engine.budget?.used += 1
                progressing = true
                if planned.run == run {
                    sends.append(
                        Send(
                            at: clock, kind: planned.kind,
                            patch: planned.request.body["content"]?.objectValue ?? [:],
                            shown: engine.sessions[slug]?.acknowledged?.content ?? [:]))
                }
            }
        }
    }
}
