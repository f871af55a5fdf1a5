/// Payload text made safe to print to a terminal: every character a terminal would act on
/// instead of showing is replaced by a visible escape in Swift's notation, `\u{1B}` (hex digits in
/// upper case, at least two), so the reader sees that the name holds a control and which one.
///
/// Why: anyone who can open a pull request names its jobs, workflows and branches, and the CLI
/// prints them to a maintainer's terminal. ESC starts sequences that move the cursor and rewrite
/// lines already printed (`ESC [ 1A`), retitle the window or write the clipboard (OSC 52:
/// `ESC ] 52 ; … BEL`); the C1 controls (U+0080–U+009F, U+009B being CSI) are the same
/// introducers in one character for terminals that honour them; DEL and the other C0 controls
/// erase or beep; the bidi controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069)
/// reorder what follows, so a line reads differently from its bytes. TAB, LF and CR are escaped
/// too: inside a name they would fake columns and lines of the CLI's own output.
///
/// Works per Unicode scalar, never per `Character`: a control followed by a combining mark is a
/// single `Character` equal to no control, yet the terminal still receives the control's bytes.
/// A backslash is left alone: the escape is for a human reader, not a format to parse back.
public enum TerminalText {
    /// `text` with each control and bidi character written as `\u{XX}`; everything else as is.
    public static func sanitized(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                result += visible(scalar)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether a terminal would act on `scalar` (or reorder around it) rather than show it: C0,
    /// DEL, C1, the bidi embedding, override, isolate and mark characters, and the line and
    /// paragraph separators.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        // LINE and PARAGRAPH SEPARATOR: a viewer that breaks lines at them would show a fake line.
        case 0x2028, 0x2029: true
        default: false
        }
    }

    /// `\u{1B}`: the scalar's value in upper-case hex, padded to two digits.
    public static func visible(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "\\u{" + (hex.count < 2 ? "0" + hex : hex) + "}"
    }
}
