/// What the phone draws for a steps- or generic-template content, as geometry: the source of both the
/// terminal drawing (`runs show`) and the SVG on the status page. It reads the content alone, as
/// the phone does, so it shows what was actually pushed, not what the bridge believes.
public struct CardLayout: Sendable, Equatable {
    /// One step's column.
    public struct Segment: Sendable, Equatable {
        /// 1-based, as `current_step` counts.
        public var step: Int
        /// Left edge and width as fractions of the bar (they add up to 1 over all segments).
        public var x: Double
        public var width: Double
        /// Parallel jobs drawn stacked (1–10).
        public var rows: Int
        /// How full the column is drawn: 1 before the current step, `progress` on it (in the
        /// segmented and weighted layouts), 0 after.
        public var fill: Double
        /// The step's colour: its `step_colors` entry, else the accent colour.
        public var color: String
        public var label: String?
        public var isCurrent: Bool
    }

    public enum Style: String, Sendable {
        /// `step_rows` without weights: equal columns, a dot per job.
        case matrix
        /// `step_weights` with `step_rows`: columns sized by time, fan-out kept.
        case weightedMatrix = "weighted matrix"
        /// `step_weights` alone: one row of proportional segments.
        case segmented
        /// The generic template: one bar filled to `progress`.
        case bar
    }

    public var segments: [Segment]
    public var style: Style
    public var currentStep: Int
    public var totalSteps: Int
    public var progress: Double
    public var state: String
    public var subtitle: String?
    public var accentColor: String
    /// `current/total`, the header counter; the percentage on a generic bar, as the phone shows it.
    public var counter: String {
        style == .bar ? "\(Int((progress * 100).rounded()))%" : "\(currentStep)/\(totalSteps)"
    }
    /// The live window's end, when one is counting down.
    public var liveUntil: UnixTime?
    public var liveFrom: UnixTime?
    public var isEnded: Bool

    /// Lays out `content`; `isEnded` is the activity's state (`ended` shows everything complete).
    public init(content: [String: JSONValue], isEnded: Bool = false) {
        if content["template"] == "generic" {
            self.init(bar: content, isEnded: isEnded)
        } else {
            self.init(steps: content, isEnded: isEnded)
        }
    }

    /// A steps-template content: a column per step.
    init(steps content: [String: JSONValue], isEnded: Bool) {
        let total = max(1, content["total_steps"]?.intValue ?? 1)
        let current = min(max(0, content["current_step"]?.intValue ?? 0), total)
        let progress = min(1, max(0, content["progress"]?.doubleValue ?? 0))
        let accent = content["accent_color"]?.stringValue ?? "blue"
        let rows = Self.array(content["step_rows"], count: total)?.map { min(10, max(1, $0.intValue ?? 1)) }
        let weights = Self.array(content["step_weights"], count: total)?.map { max(0.000_001, $0.doubleValue ?? 1) }
        let colors = Self.array(content["step_colors"], count: total)?.map { $0.stringValue ?? "" }
        let labels = Self.array(content["step_labels"], count: total)?.map { $0.stringValue ?? "" }
        style = weights == nil ? .matrix : (rows == nil ? .segmented : .weightedMatrix)
        let widths = weights ?? Array(repeating: 1, count: total)
        let sum = widths.reduce(0, +)
        var x = 0.0
        var segments: [Segment] = []
        for index in 0..<total {
            let step = index + 1
            let width = widths[index] / sum
            let fill: Double
            if isEnded || step < current {
                fill = 1
            } else if step == current {
                // In the matrix layout `progress` is the whole run's; the current column shows as
                // started. In the segmented and weighted layouts it is this column's fill.
                fill = style == .matrix ? 0.5 : progress
            } else {
                fill = 0
            }
            let color = colors.flatMap { $0[index].isEmpty ? nil : $0[index] } ?? accent
            segments.append(
                Segment(
                    step: step, x: x, width: width, rows: style == .segmented ? 1 : (rows?[index] ?? 1), fill: fill,
                    color: color, label: labels.map { $0[index] }, isCurrent: step == current))
            x += width
        }
        self.segments = segments
        self.currentStep = current
        self.totalSteps = total
        self.progress = progress
        self.state = content["state"]?.stringValue ?? ""
        self.subtitle = content["subtitle"]?.stringValue
        self.accentColor = accent
        self.liveUntil = content["live_progress"] == true ? content["end_date"]?.doubleValue : nil
        self.liveFrom = content["live_progress"] == true ? content["start_date"]?.doubleValue : nil
        self.isEnded = isEnded
    }

    /// A generic-template content: one segment, filled to `progress` (whole once ended).
    init(bar content: [String: JSONValue], isEnded: Bool) {
        let progress = min(1, max(0, content["progress"]?.doubleValue ?? 0))
        let accent = content["accent_color"]?.stringValue ?? "blue"
        segments = [
            Segment(
                step: 1, x: 0, width: 1, rows: 1, fill: isEnded ? 1 : progress, color: accent, label: nil,
                isCurrent: !isEnded)
        ]
        style = .bar
        currentStep = 1
        totalSteps = 1
        self.progress = isEnded ? 1 : progress
        state = content["state"]?.stringValue ?? ""
        subtitle = content["subtitle"]?.stringValue
        accentColor = accent
        liveUntil = content["live_progress"] == true ? content["end_date"]?.doubleValue : nil
        liveFrom = content["live_progress"] == true ? content["start_date"]?.doubleValue : nil
        self.isEnded = isEnded
    }

    /// The array when it has exactly `count` entries; a mismatched one is ignored, as the phone does.
    static func array(_ value: JSONValue?, count: Int) -> [JSONValue]? {
        guard let array = value?.arrayValue, array.count == count else { return nil }
        return array
    }

    /// The RGB of a PushWard colour (named or `#RRGGBB[AA]`), as iOS draws the named ones.
    public static func rgb(_ color: String) -> (red: Int, green: Int, blue: Int) {
        let named: [String: (Int, Int, Int)] = [
            "red": (255, 59, 48), "orange": (255, 149, 0), "yellow": (255, 204, 0), "green": (52, 199, 89),
            "blue": (0, 122, 255), "purple": (175, 82, 222), "pink": (255, 45, 85), "indigo": (88, 86, 214),
            "teal": (48, 176, 199), "cyan": (50, 173, 230), "mint": (0, 199, 190), "brown": (162, 132, 94),
        ]
        if let rgb = named[color] { return rgb }
        let hex = color.hasPrefix("#") ? String(color.dropFirst()) : color
        guard hex.count == 6 || hex.count == 8, let value = UInt32(hex.prefix(6), radix: 16) else {
            return (0, 122, 255)
        }
        return (Int(value >> 16 & 0xFF), Int(value >> 8 & 0xFF), Int(value & 0xFF))
    }
}
