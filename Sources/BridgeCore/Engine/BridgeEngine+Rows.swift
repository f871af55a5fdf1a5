extension BridgeEngine {
    /// The rows `changes` (from `takeChanges`) stand for, as of `now`: what the store writes. Sorted,
    /// so the same changes always write in the same order.
    public func rows(for changes: EngineChanges, at now: UnixTime) -> EngineRows {
        var rows = EngineRows()
        for key in changes.runs.sorted() {
            guard let state = runBook[key], let slug = runBook.slugs[key] else { continue }
            let jobs = (changes.jobs[key] ?? []).sorted().compactMap { state.jobs[$0] }
            rows.runs.append(
                EngineRows.Run(state: state, slug: slug, released: runBook.released.contains(key), jobs: jobs))
        }
        rows.history = changes.history.keys.sorted().compactMap { changes.history[$0] }
        rows.arrivals = changes.arrivalHours.sorted().map { ($0, cardBook.arrivals.perHour[$0] ?? 0) }
        if changes.gate { rows.gate = dispatch.gate }
        rows.alerts = changes.alerts
        rows.widgets = changes.widgets.sorted().compactMap { widgetBook.sessions[$0] }
        var touched = changes.slugs
        for key in changes.runs { if let slug = runBook.slugs[key] { touched.insert(slug) } }
        for slug in touched.sorted() {
            guard let session = cardBook[slug] else { continue }
            rows.sessions.append(
                EngineRows.Session(
                    session: session, floor: cardBook.progressFloors[slug], desired: desired(slug: slug, at: now))
            )
        }
        return rows
    }
}
