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
    /// `render`'s simulation: the same clock, timers and acknowledge-everything PushWard.
    private(set) var session: RenderSession
    private(set) var sends: [Send] = []

    init(run: RunKey, settings: ActivitySettings) {
        self.run = run
        session = RenderSession(engine: BridgeEngine(settings: settings))
        session.logsDecisions = true
    }

    /// The slug the run draws on, once it was seen.
    var slug: String? { session.engine.slugs[run] }

    /// The reconciler's last word on the run's card at each moment the replay stopped, when it
    /// was not a send.
    var decisions: [UnixTime: ReconcileDecision] { slug.flatMap { session.decisions[$0] } ?? [:] }

    /// What the run's card shows at the clock: nil before its first frame or when another run holds it.
    var shown: [String: JSONValue]? {
        guard let slug, let owned = session.engine.sessions[slug], owned.owner == run else { return nil }
        return owned.acknowledged?.content
    }

    /// Applies a delivery received at `time`, after every timer due before it.
    mutating func feed(_ event: WebhookEvent, at time: UnixTime) {
        record(session.feed(event, at: time))
    }

    /// Lets time run to `limit`: each timer due on the way fires and what it causes is sent, then
    /// the card is decided at `limit` itself.
    mutating func run(until limit: UnixTime) {
        record(session.run(until: limit))
    }

    private mutating func record(_ outputs: [RenderSession.Output]) {
        for output in outputs where output.planned.run == run {
            sends.append(
                Send(
                    at: output.at, kind: output.planned.kind,
                    patch: output.planned.request.body["content"]?.objectValue ?? [:], shown: output.shown ?? [:]))
        }
    }
}
