import BridgeCore
import BridgeDaemon
import Testing

/// The status page's two escaping functions and the core's URL path encoding, on their own: per
/// scalar and per byte, so a combining mark or a ZWJ after a quote cannot hide it.
@Suite("Markup escaping")
struct MarkupTests {
    @Test("text and attributes: & < > \" ' become entities, also when a combining mark or ZWJ follows")
    func escaped() {
        #expect(Markup.escaped("<&>\"'") == "&lt;&amp;&gt;&quot;&#39;")
        #expect(Markup.escaped("Build\"\u{301} onload=x") == "Build&quot;\u{301} onload=x")
        #expect(Markup.escaped("a\"\u{200D}b") == "a&quot;\u{200D}b")
        #expect(Markup.escaped("<\u{200D}img>") == "&lt;\u{200D}img&gt;")
        #expect(Markup.escaped("'\u{301}") == "&#39;\u{301}")
        let hostile = Markup.escaped("\"\u{301}<\u{200D}>\u{301}'\u{20DD}")
        #expect(!hostile.utf8.contains { [0x22, 0x27, 0x3C, 0x3E].contains($0) })
    }

    @Test("controls and bidi characters show as \\u{XX}; TAB, LF and CR stay whitespace")
    func controls() {
        #expect(Markup.escaped("a\u{0}b\u{1B}c\u{9B}d\u{7F}") == "a\\u{00}b\\u{1B}c\\u{9B}d\\u{7F}")
        #expect(Markup.escaped("\u{202E}gnp\u{2066}") == "\\u{202E}gnp\\u{2066}")
        #expect(Markup.escaped("a\tb\nc\r") == "a\tb\nc\r")
        #expect(Markup.escaped("tëst 👩‍💻") == "tëst 👩‍💻")
    }

    @Test("links: only absolute http(s) URLs with a host, everything else #")
    func href() {
        #expect(
            Markup.href("https://github.com/acme/widgets/actions/runs/1")
                == "https://github.com/acme/widgets/actions/runs/1")
        #expect(Markup.href("HTTP://example.com/a?b=1&c=2") == "HTTP://example.com/a?b=1&amp;c=2")
        for url in [
            "javascript:alert(1)", "JavaScript:alert(1)", " javascript:alert(1)", "\u{1}javascript:alert(1)",
            "data:text/html,<script>alert(1)</script>", "vbscript:x", "//evil.example/x", "/relative", "", "https://",
            "http:///path", "https:\\\\evil", "ftp://example.com/",
        ] {
            #expect(Markup.href(url) == "#", "\(url.debugDescription)")
        }
    }

    @Test("a link keeps no byte that could end the attribute or hide in it")
    func hrefBytes() {
        let link = Markup.href("https://github.com/a/b/commit/x\"\u{301} onload=alert(1) '<\u{202E}>\u{0}")
        #expect(link == "https://github.com/a/b/commit/x%22%CC%81%20onload=alert(1)%20&#39;%3C%E2%80%AE%3E%00")
        #expect(!link.utf8.contains { $0 == 0x22 || $0 == 0x3C || $0 == 0x3E || $0 == 0x20 || $0 < 0x20 || $0 > 0x7E })
    }

    @Test("path segments keep only unreserved bytes; a path keeps its slashes")
    func percentEncoding() {
        #expect(PercentEncoding.pathSegment("abc123DEF-._~") == "abc123DEF-._~")
        #expect(PercentEncoding.pathSegment("a\"\u{301} b/c?d#e") == "a%22%CC%81%20b%2Fc%3Fd%23e")
        #expect(PercentEncoding.pathSegment("\u{202E}<") == "%E2%80%AE%3C")
        #expect(PercentEncoding.path("acme/wid gets") == "acme/wid%20gets")
        #expect(PercentEncoding.path("owner/a/b") == "owner/a/b")
    }
}
