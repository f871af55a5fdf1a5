/// Text made fit for a phone: every string the bridge sends to PushWard (card, summary card,
/// widget, alert and notification text, tap-action titles, activity names) passes through here.
///
/// Why one place: PushWard counts its limits in Unicode scalars ("max 32 runes" for a step label;
/// its OpenAPI `maxLength`s count code points), while Swift's `String.count` counts grapheme
/// clusters. A flag is two scalars, `⚙️` two, a family emoji seven, an `e` with three accents
/// four: a job name that fits by `count` can be refused (422) by PushWard, and a refused label is
/// in every later full frame of the run. And the names come from whoever can open a pull request:
/// a right-to-left override in a fork's workflow name would reverse the rest of the line on the
/// Lock Screen, a line separator would break it in two.
///
/// Both steps work per Unicode scalar; the cut is made between grapheme clusters, so it never
/// leaves half a flag, a combining mark without its base, or a dangling joiner.
public enum CardText {
    /// The ellipsis that ends a cut text: one scalar.
    public static let ellipsis = "…"

    /// `text` cleaned (`plain`) and clamped (`clamp`): what every payload string that lands in a
    /// card, alert or widget goes through.
    public static func fitted(_ text: String, to limit: Int) -> String {
        clamp(plain(text), to: limit)
    }

    /// `text` with C0 and C1 controls and the line and paragraph separators as spaces, and the
    /// bidirectional controls (embeddings, overrides, isolates, the marks) and the deprecated
    /// format controls removed. Joiners (U+200C, U+200D), variation selectors and tag characters
    /// stay: emoji sequences and several scripts need them.
    public static func plain(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { disposition(of: $0) != .keep }) else { return text }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch disposition(of: scalar) {
            case .keep: scalars.append(scalar)
            case .space: scalars.append(" ")
            case .drop: continue
            }
        }
        return String(scalars)
    }

    /// At most `limit` Unicode scalars: `text` itself when it fits, else the longest run of whole
    /// grapheme clusters that fits with `…` after it. A zero-width joiner left at the end of the
    /// kept part (a cluster can end with one when the text went on with no emoji) is dropped, so
    /// nothing joins the ellipsis.
    public static func clamp(_ text: String, to limit: Int) -> String {
        guard text.unicodeScalars.count > limit else { return text }
        guard limit > 0 else { return "" }
        let room = limit - 1
        var kept = String.UnicodeScalarView()
        var count = 0
        for character in text {
            let size = character.unicodeScalars.count
            guard count + size <= room else { break }
            kept.append(contentsOf: character.unicodeScalars)
            count += size
        }
        while kept.last == "\u{200D}" { kept.removeLast() }
        return String(kept) + ellipsis
    }

    /// The number PushWard counts: Unicode scalars.
    public static func runes(_ text: String) -> Int { text.unicodeScalars.count }

    enum Disposition { case keep, space, drop }

    static func disposition(of scalar: Unicode.Scalar) -> Disposition {
        switch scalar.value {
        // Bidi: ALM, LRM/RLM, embeddings and overrides (LRE RLE PDF LRO RLO), isolates (LRI RLI
        // FSI PDI); and the deprecated format controls (U+206A–U+206F) and the interlinear
        // annotation controls (U+FFF9–U+FFFB), which change how what follows is shown.
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x206A...0x206F, 0xFFF9...0xFFFB:
            .drop
        // C0 (TAB, LF and CR included: a card line is one line), DEL, C1, LINE and PARAGRAPH SEPARATOR.
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029:
            .space
        default:
            .keep
        }
    }
}
