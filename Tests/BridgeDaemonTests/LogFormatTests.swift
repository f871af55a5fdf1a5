import BridgeCore
import BridgeDaemon
import BridgeTestSupport
import Foundation
import Testing

/// The two log line formats: JSON as before, and `time level message key=value …` text in which
/// nothing a payload carries can act on the terminal or fake a line or a field.
@Suite("Log format")
struct LogFormatTests {
    static let time = Date(timeIntervalSince1970: 1_765_000_000.25)

    static func text(_ metadata: [String: JSONValue], message: String = "applied a delivery") -> String {
        LogFormat.text.line(time: time, level: .warning, label: "pushward-bridge", message: message, metadata: metadata)
    }

    @Test("text: time, level, message, then the keys sorted, plain values bare")
    func textLine() {
        let line = Self.text([
            "run.id": 42, "github.repository": "acme/widgets", "pushward.dry_run": true, "ratio": 0.5, "none": .null,
        ])
        #expect(
            line
                == "2025-12-06T05:46:40.250Z WARNING applied a delivery github.repository=acme/widgets none=null "
                + "pushward.dry_run=true ratio=0.5 run.id=42")
    }

    @Test("text: a value with a space, quote, = or backslash is quoted with its quotes and backslashes escaped")
    func quoting() {
        #expect(Self.text(["b": "a b"]).hasSuffix(#" b="a b""#))
        #expect(Self.text(["b": "x=1"]).hasSuffix(#" b="x=1""#))
        #expect(Self.text(["b": #"say "hi""#]).hasSuffix(#" b="say \"hi\"""#))
        #expect(Self.text(["b": #"C:\path"#]).hasSuffix(#" b="C:\\path""#))
        #expect(Self.text(["b": ""]).hasSuffix(#" b="""#))
        #expect(Self.text(["b": ["x", 1]]).hasSuffix(#" b=["x",1]"#))
    }

    @Test("text: controls, bidi characters and NUL are visible escapes; emoji and long text pass as they are")
    func hostile() {
        let hostile = "main\u{1B}[2J\u{202E}gnp.exe\n fake=line\0\u{9B}31m\u{7F}"
        let line = Self.text(["github.branch": .string(hostile), "k\u{1B}]52;": "v"], message: "x\u{2066}y")
        #expect(!line.unicodeScalars.contains { TerminalText.isControl($0) }, "\(line)")
        #expect(line.contains(#"\u{1B}[2J"#))
        #expect(line.contains(#"\u{202E}"#))
        #expect(line.contains(#"\u{0A}"#))
        #expect(line.contains(#"\u{00}"#))
        #expect(line.contains(#"\u{9B}"#))
        #expect(line.contains(#"x\u{2066}y"#))
        // LINE and PARAGRAPH SEPARATOR would start a fake line in a viewer that breaks at them.
        let separated = Self.text(["github.branch": .string("a\u{2028}b\u{2029}c")])
        #expect(separated.contains(#"a\u{2028}b\u{2029}c"#), "\(separated)")
        #expect(line.contains(#"github.branch="main\u{1B}[2J\u{202E}gnp.exe\u{0A} fake=line"#))
        #expect(line.contains(#""k\u{1B}]52;"=v"#))
        let long = String(repeating: "🚀", count: 5_000)
        #expect(Self.text(["emoji": .string(long)]).hasSuffix(" emoji=" + long))
    }

    @Test("json: one object with ts, level, logger and msg beside the metadata, escaped as JSON escapes")
    func jsonLine() throws {
        let line = LogFormat.json.line(
            time: Self.time, level: .info, label: "pushward-bridge", message: "m",
            metadata: ["github.branch": "a\u{1B}b\nc"])
        #expect(!line.contains("\n") && !line.contains("\u{1B}"))
        let object = try JSONValue(parsing: Data(line.utf8))
        #expect(object["ts"] == "2025-12-06T05:46:40.250Z")
        #expect(object["level"] == "info")
        #expect(object["logger"] == "pushward-bridge")
        #expect(object["msg"] == "m")
        #expect(object["github.branch"] == "a\u{1B}b\nc")
    }

    @Test("the choice: log_format wins; unset, text on a terminal and JSON elsewhere")
    func choice() {
        #expect(LogFormat.chosen(configured: nil, standardErrorIsTerminal: true) == .text)
        #expect(LogFormat.chosen(configured: nil, standardErrorIsTerminal: false) == .json)
        #expect(LogFormat.chosen(configured: "json", standardErrorIsTerminal: true) == .json)
        #expect(LogFormat.chosen(configured: "text", standardErrorIsTerminal: false) == .text)
    }

    @Test("a Logger writes the format it was given")
    func loggerUsesFormat() {
        let lines = LineLog()
        let logger = Logger(
            label: "t", sink: { lines.append($0) }, clock: { Self.time }, format: .text)
        logger.notice("hello", ["k": "v"])
        #expect(lines.all == ["2025-12-06T05:46:40.250Z NOTICE  hello k=v"])
    }

    @Test("a reload names log_format and public_url as needing a restart: both are taken at start")
    func reloadNeedsRestart() async throws {
        let directory = try ScratchDirectory()
        let lines = LineLog()
        let configuration = try BridgeConfiguration(
            json: Data(
                """
                {"listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "\(directory.path("b.sqlite"))",
                 "github": {"webhook_secrets": ["log-format-secret-0123456789"]}}
                """.utf8))
        let daemon = try Daemon.start(
            configuration: configuration, logger: Logger(label: "test", sink: { lines.append($0) }))
        var changed = configuration
        changed.logFormat = "text"
        changed.publicURL = "https://hooks.example.com"
        let new = changed
        try await offPool { daemon.reload(new) }
        await daemon.shutdown()
        let line = try #require(lines.all.first { $0.contains("reloaded the configuration") })
        #expect(try JSONValue(parsing: Data(line.utf8))["needs_restart"] == ["log_format", "public_url"])
    }
}
