/// The engine's side of the widgets (`WidgetBook`): it hands the widget book each run that moved,
/// and the dispatch control its requests are admitted by.
extension BridgeEngine {
    /// Points every widget that follows `key`'s run at it when it is the newest they follow.
    mutating func followWidgets(_ key: RunKey) {
        guard !configuration.widgets.isEmpty, let state = runBook[key],
            CardWithholding.of(state, filter: configuration.filter) == nil
        else { return }
        // The widget book may ask the runs while it changes: a copy (shared storage) is read.
        let runBook = runBook
        widgetBook.follow(
            state, configured: configuration.widgets, icon: configuration.settings.icon,
            supersededBy: { runBook.supersedingRunNumber(of: state) }, changes: &changes)
    }

    /// The widget requests due at `now`, none for a widget whose request is still out.
    public mutating func dueWidgetRequests(at now: UnixTime, inFlight: Set<String>) -> [PlannedWidgetRequest] {
        widgetBook.dueRequests(at: now, inFlight: inFlight, configured: configuration.widgets, dispatch: &dispatch)
    }

    /// When a widget next wants deciding although nothing happens: a retry, or the end of a pause.
    public func nextWidgetWakeup(after now: UnixTime) -> UnixTime? {
        widgetBook.nextWakeup(after: now)
    }

    /// What became of a widget request (`WidgetBook.handle`). Returns what the daemon logs.
    public mutating func handleWidget(_ answer: PushWardAnswer, for planned: PlannedWidgetRequest, at now: UnixTime)
        -> WidgetAnswerEffect
    {
        widgetBook.handle(answer, for: planned, at: now, dispatch: &dispatch, changes: &changes)
    }
}
