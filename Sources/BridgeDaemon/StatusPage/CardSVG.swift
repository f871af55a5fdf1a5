import BridgeCore
import Foundation

/// Draws a card as an SVG, the way the steps Live Activity looks on the Lock Screen: a dark
/// rounded panel, the state and subtitle with the counter (or the ETA) in the header, a column
/// per step with a rounded bar per parallel job, filled up to where the run is.
///
/// Pure: geometry comes from `CardLayout` alone, so the page shows what the content tells a
/// phone to draw, not what the bridge believes about the run.
public enum CardSVG {
    /// What the drawing needs besides the layout.
    public struct Options: Sendable {
        /// Prefix of the drawing's element ids (patterns): several cards share one HTML page.
        public var id: String
        /// `data-card` on the root: `shown` (what phones show) or `desired`.
        public var role: String
        /// The clock reading the live window counts down from; nil draws it without an ETA.
        public var now: UnixTime?
        /// Titles of the buttons under the bar (`url_action`, `secondary_url_action`).
        public var buttons: [String]
        /// The panel's width in CSS pixels; the height follows from the content.
        public var width: Double

        public init(
            id: String = "card", role: String = "shown", now: UnixTime? = nil, buttons: [String] = [],
            width: Double = 360
        ) {
            self.id = id
            self.role = role
            self.now = now
            self.buttons = buttons
            self.width = width
        }
    }

    static let padding = 16.0
    static let barTop = 72.0
    static let textColor = "#ffffff"
    static let secondaryColor = "rgba(235,235,245,0.6)"
    static let fontFamily =
        "-apple-system, BlinkMacSystemFont, 'SF Pro Text', 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"

    /// The whole card.
    public static func render(_ layout: CardLayout, options: Options = Options()) -> String {
        let width = options.width
        let inner = width - 2 * padding
        let maxRows = layout.segments.map(\.rows).max() ?? 1
        let rowHeight = maxRows <= 3 ? 9.0 : (maxRows <= 6 ? 7.0 : 5.0)
        let rowGap = maxRows <= 6 ? 3.0 : 2.0
        let barHeight = Double(maxRows) * rowHeight + Double(maxRows - 1) * rowGap
        let labels = layout.totalSteps <= 6 && layout.segments.contains { !($0.label ?? "").isEmpty }
        var height = barTop + barHeight + padding
        if labels { height += 18 }
        let buttons = options.buttons.prefix(2).filter { !$0.isEmpty }
        if !buttons.isEmpty { height += 42 }
        let live = liveFraction(layout, now: options.now)

        var svg = root(layout, options: options, height: height)
        // The window's stripes take the current step's colour, over its dimmed track.
        let current = CardLayout.rgb(layout.segments.first(where: \.isCurrent)?.color ?? layout.accentColor)
        svg += "<defs><pattern id=\"\(Markup.escaped(options.id))-stripes\" width=\"7\" height=\"7\""
        svg += " patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
        svg += "<rect width=\"3.5\" height=\"7\" fill=\"rgb(\(current.red),\(current.green),\(current.blue))\""
        svg += " fill-opacity=\"0.75\"/></pattern></defs>"
        svg += "<rect class=\"panel\" width=\"\(n(width))\" height=\"\(n(height))\" rx=\"24\" fill=\"#1c1c1e\""
        svg += " stroke=\"#ffffff\" stroke-opacity=\"0.08\"/>"
        svg += header(layout, options: options, live: live)

        // Columns: a gap that shrinks with the count, so 64 steps still fit.
        let gap = min(6, inner / Double(layout.totalSteps) * 0.3)
        for segment in layout.segments {
            let x = padding + segment.x * inner + gap / 2
            let w = max(1.5, segment.width * inner - gap)
            let stack = Double(segment.rows) * rowHeight + Double(segment.rows - 1) * rowGap
            let top = barTop + (barHeight - stack) / 2
            let rgb = CardLayout.rgb(segment.color)
            let color = "rgb(\(rgb.red),\(rgb.green),\(rgb.blue))"
            let isLive = segment.isCurrent && live != nil && !layout.isEnded
            let fill = isLive ? (live?.fraction ?? segment.fill) : segment.fill
            svg += "<g class=\"step\" data-step=\"\(segment.step)\" data-rows=\"\(segment.rows)\""
            svg += " data-width=\"\(String(format: "%.4f", segment.width))\" data-fill=\"\(n(fill))\""
            svg += " data-color=\"\(Markup.escaped(segment.color))\">"
            for row in 0..<segment.rows {
                let y = top + Double(row) * (rowHeight + rowGap)
                let frame = "x=\"\(n(x))\" y=\"\(n(y))\" height=\"\(n(rowHeight))\" rx=\"\(n(rowHeight / 2))\""
                svg += "<rect class=\"job\" \(frame) width=\"\(n(w))\" fill=\"\(color)\" fill-opacity=\"0.28\"/>"
                if fill > 0 {
                    // A started bar shows at least its rounded cap, as on the phone.
                    let filled = min(w, max(min(rowHeight, w), w * fill))
                    svg += "<rect class=\"fill\" \(frame) width=\"\(n(filled))\" fill=\"\(color)\"/>"
                }
                if isLive, fill < 1 {
                    let start = x + w * fill
                    svg += "<rect class=\"live\" x=\"\(n(start))\" y=\"\(n(y))\" width=\"\(n(x + w - start))\""
                    svg += " height=\"\(n(rowHeight))\" rx=\"\(n(rowHeight / 2))\""
                    svg += " fill=\"url(#\(Markup.escaped(options.id))-stripes)\"/>"
                }
            }
            if segment.isCurrent && !layout.isEnded {
                svg += "<rect class=\"current\" x=\"\(n(x - 2))\" y=\"\(n(top - 2))\" width=\"\(n(w + 4))\""
                svg += " height=\"\(n(stack + 4))\" rx=\"\(n(rowHeight / 2 + 2))\" fill=\"none\""
                svg += " stroke=\"#ffffff\" stroke-opacity=\"0.9\" stroke-width=\"1.5\"/>"
            }
            let characters = Int((w + gap - 2) / 6.2)
            // A label cut to a letter and an ellipsis says nothing; a narrow step goes without.
            if labels, let label = segment.label, !label.isEmpty, label.count <= characters || characters >= 3 {
                svg += "<text class=\"label\" x=\"\(n(x + w / 2))\" y=\"\(n(barTop + barHeight + 16))\""
                svg += " text-anchor=\"middle\" font-size=\"11\""
                svg +=
                    segment.isCurrent && !layout.isEnded
                    ? " font-weight=\"600\" fill=\"\(textColor)\"" : " fill=\"\(secondaryColor)\""
                svg += ">\(Markup.escaped(clip(label, to: characters)))</text>"
            }
            svg += "</g>"
        }

        if !buttons.isEmpty {
            let top = height - padding - 30
            let buttonWidth = (inner - Double(buttons.count - 1) * 8) / Double(buttons.count)
            for (index, title) in buttons.enumerated() {
                let x = padding + Double(index) * (buttonWidth + 8)
                svg += "<g class=\"button\"><rect x=\"\(n(x))\" y=\"\(n(top))\" width=\"\(n(buttonWidth))\""
                svg += " height=\"30\" rx=\"15\" fill=\"#ffffff\" fill-opacity=\"0.14\"/>"
                svg += "<text x=\"\(n(x + buttonWidth / 2))\" y=\"\(n(top + 19.5))\" text-anchor=\"middle\""
                svg += " font-size=\"13\" font-weight=\"600\" fill=\"\(textColor)\">"
                svg += "\(Markup.escaped(clip(title, to: Int(buttonWidth / 7.5))))</text></g>"
            }
        }
        return svg + "</svg>"
    }

    /// A card-sized panel with a message, for a run whose card nothing was shown on yet: the page
    /// keeps one drawing per run either way.
    public static func placeholder(_ message: String, options: Options = Options()) -> String {
        let height = 104.0
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"card placeholder\""
        svg += " data-card=\"\(Markup.escaped(options.role))\" width=\"\(n(options.width))\" height=\"\(n(height))\""
        svg += " viewBox=\"0 0 \(n(options.width)) \(n(height))\" font-family=\"\(Markup.escaped(fontFamily))\""
        svg += " role=\"img\""
        svg += " aria-label=\"\(Markup.escaped(message))\">"
        svg += "<rect width=\"\(n(options.width))\" height=\"\(n(height))\" rx=\"24\" fill=\"#1c1c1e\""
        svg += " stroke=\"#ffffff\" stroke-opacity=\"0.25\" stroke-dasharray=\"6 5\"/>"
        svg += "<text x=\"\(n(options.width / 2))\" y=\"\(n(height / 2 + 5))\" text-anchor=\"middle\" font-size=\"14\""
        svg += " fill=\"\(secondaryColor)\">\(Markup.escaped(message))</text></svg>"
        return svg
    }

    /// The opening tag, with what tests and scripts read off the drawing as data attributes.
    static func root(_ layout: CardLayout, options: Options, height: Double) -> String {
        let description = "\(layout.state), step \(layout.counter)" + (layout.isEnded ? ", ended" : "")
        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"card\" data-card=\"\(Markup.escaped(options.role))\""
        svg += " data-style=\"\(layout.style.rawValue)\" data-steps=\"\(layout.totalSteps)\""
        svg += " data-current=\"\(layout.currentStep)\"" + (layout.isEnded ? " data-ended=\"true\"" : "")
        svg += " width=\"\(n(options.width))\" height=\"\(n(height))\""
        svg += " viewBox=\"0 0 \(n(options.width)) \(n(height))\" font-family=\"\(Markup.escaped(fontFamily))\""
        svg += " role=\"img\""
        svg += " aria-label=\"\(Markup.escaped(description))\"><title>\(Markup.escaped(description))</title>"
        return svg
    }

    /// Icon, state, subtitle, and the counter, which gives its place to the ETA while one counts
    /// down and moves to the subtitle's line, as the template does.
    static func header(_ layout: CardLayout, options: Options, live: (fraction: Double, remaining: Double?)?)
        -> String
    {
        let width = options.width
        let accent = CardLayout.rgb(layout.accentColor)
        let accentColor = "rgb(\(accent.red),\(accent.green),\(accent.blue))"
        var svg = "<rect class=\"icon\" x=\"\(n(padding))\" y=\"16\" width=\"38\" height=\"38\" rx=\"10\""
        svg += " fill=\"\(accentColor)\"/>"
        // A branch glyph, after the `arrow.triangle.branch` symbol the bridge sends as its icon.
        let left = padding + 13
        let right = padding + 26
        svg += "<g fill=\"none\" stroke=\"#ffffff\" stroke-width=\"2.2\" stroke-linecap=\"round\">"
        svg += "<path d=\"M\(n(left)) 26 V44 M\(n(right)) 29 C\(n(right)) 36 \(n(left)) 33 \(n(left)) 40\"/>"
        svg += "<circle cx=\"\(n(left))\" cy=\"24.5\" r=\"2.6\"/><circle cx=\"\(n(right))\" cy=\"26.5\" r=\"2.6\"/>"
        svg += "</g>"

        let eta = live?.remaining.map(formatETA)
        let topRight = eta ?? layout.counter
        let textLeft = padding + 50
        let reserved = Double(topRight.count) * 10 + 12
        let stateCharacters = max(4, Int((width - textLeft - padding - reserved) / 9.2))
        svg += "<text class=\"state\" x=\"\(n(textLeft))\" y=\"33\" font-size=\"16\" font-weight=\"600\""
        svg += " fill=\"\(textColor)\">\(Markup.escaped(clip(layout.state, to: stateCharacters)))</text>"
        let bottomRight = eta != nil ? layout.counter : ""
        if let subtitle = layout.subtitle, !subtitle.isEmpty {
            let subtitleReserved = bottomRight.isEmpty ? 0 : Double(bottomRight.count) * 8 + 10
            let characters = max(4, Int((width - textLeft - padding - subtitleReserved) / 7.0))
            svg += "<text class=\"subtitle\" x=\"\(n(textLeft))\" y=\"51\" font-size=\"13\""
            svg += " fill=\"\(secondaryColor)\">\(Markup.escaped(clip(subtitle, to: characters)))</text>"
        }
        if let eta {
            svg += "<text class=\"eta\" x=\"\(n(width - padding))\" y=\"33\" text-anchor=\"end\" font-size=\"17\""
            svg += " font-weight=\"600\" fill=\"\(textColor)\" style=\"font-variant-numeric: tabular-nums\">"
            svg += "\(Markup.escaped(eta))</text>"
            svg += "<text class=\"counter\" x=\"\(n(width - padding))\" y=\"51\" text-anchor=\"end\" font-size=\"13\""
            svg += " font-weight=\"600\" fill=\"\(secondaryColor)\">\(Markup.escaped(layout.counter))</text>"
        } else {
            svg += "<text class=\"counter\" x=\"\(n(width - padding))\" y=\"33\" text-anchor=\"end\""
            svg += " font-size=\"17\" font-weight=\"600\" fill=\"\(textColor)\""
            svg += " style=\"font-variant-numeric: tabular-nums\">\(Markup.escaped(layout.counter))</text>"
        }
        return svg
    }

    /// How far the live window has run (the current column's fill) and the seconds left; nil
    /// without a window. Without a clock reading the layout's own fill stands and no ETA shows.
    static func liveFraction(_ layout: CardLayout, now: UnixTime?) -> (fraction: Double, remaining: Double?)? {
        guard let until = layout.liveUntil, !layout.isEnded else { return nil }
        let current = layout.segments.first(where: \.isCurrent)
        guard let now else { return (current?.fill ?? 0, nil) }
        let remaining = max(0, until - now)
        guard let from = layout.liveFrom, until > from else { return (current?.fill ?? 0, remaining) }
        // A step that overruns stops at full, as on the phone.
        return (min(1, max(0, (now - from) / (until - from))), remaining)
    }

    /// `m:ss`, or `h:mm:ss` from an hour up, as a countdown reads.
    static func formatETA(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        let (hours, minutes, secs) = (total / 3600, total % 3600 / 60, total % 60)
        return hours > 0
            ? String(format: "%d:%02d:%02d", hours, minutes, secs) : String(format: "%d:%02d", minutes, secs)
    }

    /// At most `limit` characters, cut with `…`: SVG text does not wrap or truncate itself. Counts
    /// `Character`s, which is right for length; what it returns is escaped per scalar after.
    static func clip(_ text: String, to limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(max(1, limit - 1))) + "…"
    }

    /// A coordinate with at most two decimals, and none when whole.
    static func n(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        if rounded == rounded.rounded() { return String(Int(rounded)) }
        var text = String(format: "%.2f", rounded)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}
