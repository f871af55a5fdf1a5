/// What the bridge knows of one configured widget: the run it follows, what that run wants shown,
/// and what PushWard last took. Kept in SQLite (`widgets`), one row per configured slug.
public struct WidgetSession: Sendable, Equatable, Codable {
    /// What PushWard acknowledged: the run and whether it was its end, and the content as PushWard
    /// now holds it (the base of the next merge patch; its `end_date` is the window sent).
    public struct Shown: Sendable, Equatable, Codable {
        public var run: RunKey?
        public var final: Bool
        public var content: [String: JSONValue]

        public init(run: RunKey?, final: Bool, content: [String: JSONValue]) {
            self.run = run
            self.final = final
            self.content = content
        }
    }

    public var slug: String
    /// The run shown: the newest (by start) of the runs the widget's globs choose.
    public var run: RunKey?
    public var runStartedAt: UnixTime?
    /// What the run wants shown now; nil before any run.
    public var desired: [String: JSONValue]?
    /// True once the run finished: the content is its result, and stays.
    public var desiredFinal: Bool = false
    /// Nil until `POST /widgets` was acknowledged (and again after a 404, to create it anew).
    public var shown: Shown?
    public var retryAt: UnixTime?
    public var failures: Int = 0
    /// A body PushWard refused (400/422): never sent again; only a different one goes out.
    public var rejectedBody: JSONValue?
    public var lastProblem: String?
    public var lastProblemAt: UnixTime?
    /// Widget updates PushWard acknowledged for this widget since the bridge first drew it.
    public var updatesSpent: Int = 0

    public init(slug: String) {
        self.slug = slug
    }
}
