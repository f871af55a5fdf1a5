import BridgeCore
import Testing

/// `TerminalText.sanitized`: every class of character a terminal acts on becomes a visible
/// `\u{XX}`, per scalar, and everything else is left alone.
@Suite("Terminal text")
struct TerminalTextTests {
    @Test("every C0 control, TAB and LF included, is written as \\u{XX}")
    func c0() {
        for value in 0x00...0x1F {
            let scalar = Unicode.Scalar(UInt8(value))
            let hex = String(value, radix: 16, uppercase: true)
            #expect(TerminalText.sanitized("a\(Character(scalar))b") == "a\\u{\(hex.count < 2 ? "0" + hex : hex)}b")
        }
        #expect(TerminalText.sanitized("\u{1B}]52;c;aGk=\u{7}") == "\\u{1B}]52;c;aGk=\\u{07}")
        #expect(TerminalText.sanitized("\u{1B}[1A") == "\\u{1B}[1A")
        #expect(TerminalText.sanitized("a\tb\nc\r") == "a\\u{09}b\\u{0A}c\\u{0D}")
    }

    @Test("DEL and every C1 control are escaped; the bytes 0x7F and 0xC2 0x80–0x9F never remain")
    func delAndC1() {
        #expect(TerminalText.sanitized("\u{7F}") == "\\u{7F}")
        for value in 0x80...0x9F {
            let text = TerminalText.sanitized("x" + String(Character(Unicode.Scalar(UInt8(value)))))
            #expect(text == "x\\u{\(String(value, radix: 16, uppercase: true))}")
            #expect(text.utf8.allSatisfy { $0 < 0x80 })
        }
    }

    @Test("bidi marks, embeddings, overrides and isolates are escaped")
    func bidi() {
        let controls: [UInt32] = [
            0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069,
        ]
        for value in controls {
            let scalar = Unicode.Scalar(value)!
            #expect(
                TerminalText.sanitized("a\(Character(scalar))b")
                    == "a\\u{\(String(value, radix: 16, uppercase: true))}b")
        }
    }

    @Test("a control followed by a combining mark is still escaped: per scalar, not per Character")
    func combined() {
        #expect(TerminalText.sanitized("\u{1B}\u{301}[2J") == "\\u{1B}\u{301}[2J")
        #expect(TerminalText.sanitized("\u{202E}\u{200D}x") == "\\u{202E}\u{200D}x")
    }

    @Test("printable text is returned as it is: letters, emoji, ZWJ sequences, backslashes")
    func printable() {
        for text in ["build (linux)", "tëst ünïcode", "👩‍💻 deploy", "a\\u{1B}b", "→ ← █ ▒", "\u{A0}nbsp", ""] {
            #expect(TerminalText.sanitized(text) == text)
        }
    }
}
