/// What one run's card should show now, as the core computes it from the run's state.
public struct DesiredActivity: Sendable, Equatable, Codable {
    /// The run drawing the card.
    public var run: RunKey
    /// The content (steps or generic template), without the live-window fields
    /// (`live_progress`, `start_date`, `end_date`, `duration`, `remaining_time`): those follow the
    /// step changes, see `window`.
    public var content: [String: JSONValue]
    /// The current step's ETA window, when history gives it an estimate.
    public var window: LiveWindow?
    /// True for the end frame: the run is over and this is its last look.
    public var isFinal: Bool
    /// When a delivery last changed the run (arrival time): coalescing waits for a quiet moment
    /// after it. Nil when unknown.
    public var changedAt: UnixTime?
    /// The step the card is on when its content does not say (the generic template has no
    /// `current_step`): what step changes, pacing and the window follow.
    public var step: Int?

    public init(
        run: RunKey, content: [String: JSONValue], window: LiveWindow?, isFinal: Bool, changedAt: UnixTime? = nil,
        step: Int? = nil
    ) {
        self.run = run
        self.content = content
        self.window = window
        self.isFinal = isFinal
        self.changedAt = changedAt
        self.step = step
    }

    public var currentStep: Int? { content["current_step"]?.intValue ?? step }

    /// Without the fields PushWard refused (`RefusedField`): a content field is left out, which a
    /// full frame then clears; a refused window field takes the whole window with it.
    public mutating func dropping(_ fields: Set<String>) {
        for field in fields { content[field] = nil }
        if !fields.isDisjoint(with: Reconciler.windowFields) { window = nil }
    }

    /// Whether the content is the generic template's.
    public var isGeneric: Bool { content["template"] == "generic" }

    /// Whether `content` shows a failed step (a red segment, or on the generic template a red
    /// bar): the change a level never holds back.
    public static func showsFailure(_ content: [String: JSONValue]) -> Bool {
        if content["template"] == "generic" { return content["accent_color"] == .string(StepPalette.failed) }
        return content["step_colors"]?.arrayValue?.contains(.string(StepPalette.failed)) ?? false
    }
}
